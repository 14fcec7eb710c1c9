"""Which NPUs each pass's collective spans: ASTRA-sim's "involved dimensions" per parallelism.

ASTRA-sim maps a parallelism keyword to the dimensions of the logical topology each pass's
collective runs over (dimension 0 varies fastest in NPU ids):

- DATA, DLRM, MICRO, MODEL, DISTRIBUTED_INFERENCE: every dimension.
- HYBRID_DATA_MODEL: model parallel (fwd, ig) on dimension 0, data parallel (wg) on the rest.
- HYBRID_MODEL_DATA: data parallel on dimension 0, model parallel on the rest.
- HYBRID_TRANSFORMER(_FWD_IN_BCKWD): the first `model_parallel_NPU_group` NPUs in id order form
  the model-parallel group, the NPUs with the same position in every such block the data-parallel
  group. When the group size is a product of leading dimensions these are dimension subsets (and
  collectives stay hierarchical); when it splits a dimension (ASTRA-sim's break_dimension) they
  are explicit NPU groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from netsim.errors import ConfigError


@dataclass(frozen=True)
class Communicator:
    """A collective's participants: topology dimensions, or an explicit tuple of NPU ids."""

    dims: tuple | None = None
    group: tuple | None = None

    def issue(self, run, layer: int, phase: str, comm, **kwargs):
        """`run.issue` over this communicator."""
        return run.issue(layer, phase, comm, self.dims, group=self.group, **kwargs)


@dataclass(frozen=True)
class PassComms:
    """The communicator of each pass: forward and input gradient (model), weight gradient (data)."""

    fwd: Communicator
    ig: Communicator
    wg: Communicator


def split_model_data(topology, npu: int, group_size: int, where: str) -> tuple[Communicator, Communicator]:
    """(model, data) communicators when the first `group_size` NPUs in id order form a model-parallel group."""
    npus = topology.npus
    if group_size < 1 or npus % group_size:
        raise ConfigError(f"{where}: model_parallel_NPU_group: {group_size} must divide the {npus} NPUs")
    sizes = topology.dim_sizes
    for boundary in range(len(sizes) + 1):
        if prod(sizes[:boundary]) == group_size:
            return (Communicator(dims=tuple(range(boundary))),
                    Communicator(dims=tuple(range(boundary, len(sizes)))))
    block = npu // group_size
    model = tuple(range(block * group_size, (block + 1) * group_size))
    data = tuple(range(npu % group_size, npus, group_size))
    return Communicator(group=model), Communicator(group=data)


def pass_comms(policy: str, topology, npu: int, options: dict, where: str) -> PassComms:
    """The communicators of `policy` (a loop keyword or a HYBRID_CUSTOMIZED layer token) for `npu`."""
    every = Communicator(dims=tuple(range(len(topology.dim_sizes))))
    rest = Communicator(dims=tuple(range(1, len(topology.dim_sizes))))
    first = Communicator(dims=(0,))
    if policy in ("DATA", "MODEL", "MICRO", "DISTRIBUTED_INFERENCE", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED"):
        return PassComms(every, every, every)
    if policy == "HYBRID_DATA_MODEL":
        return PassComms(first, first, rest)
    if policy == "HYBRID_MODEL_DATA":
        return PassComms(rest, rest, first)
    if policy in ("HYBRID_TRANSFORMER", "HYBRID_TRANSFORMER_FWD_IN_BCKWD"):
        group = options.get("model_parallel_NPU_group")
        if not group or len(group) != 1:
            raise ConfigError(f"{where}: header: {policy} needs 'model_parallel_NPU_group: N'")
        model, data = split_model_data(topology, npu, group[0], where)
        return PassComms(model, model, data)
    raise ConfigError(f"{where}: parallelism {policy!r}: expected one of DATA, MODEL, HYBRID_DATA_MODEL, "
                      f"HYBRID_MODEL_DATA, HYBRID_TRANSFORMER")
