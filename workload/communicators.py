"""Which NPUs each pass's collective spans: ASTRA-sim's "involved dimensions" per parallelism.

ASTRA-sim maps a parallelism keyword to the dimensions of the logical topology each pass's
collective runs over (dimension 0 varies fastest in NPU ids):

- DATA, DLRM, MICRO: the weight-gradient collective over every dimension, no forward or
  input-gradient collective (none involves a dimension);
- MODEL, DISTRIBUTED_INFERENCE: forward and input-gradient collectives over every dimension, no
  weight-gradient collective (model parallelism shards the weights);
- HYBRID_DATA_MODEL: model parallel (fwd, ig) on dimension 0, data parallel (wg) on the rest.
- HYBRID_MODEL_DATA: data parallel on dimension 0, model parallel on the rest.
- HYBRID_TRANSFORMER(_FWD_IN_BCKWD): the first `model_parallel_NPU_group` NPUs in id order form
  the model-parallel group, the NPUs with the same position in every such block the data-parallel
  group. When the group size is a product of leading dimensions these are dimension subsets;
  when it ends inside a dimension, ASTRA-sim v1 splits that dimension in two (break_dimension):
  the groups are explicit, shaped like the dimensions they cover with the split one cut in its
  two parts, each part running the split dimension's algorithm. Collectives stay hierarchical.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from netsim.errors import ConfigError
from netsim.topology.base import coords_of, npu_of
from system.lockstep import Role


@dataclass(frozen=True)
class Communicator:
    """A collective's participants: topology dimensions, or an explicit tuple of NPU ids."""

    dims: tuple | None = None
    group: tuple | None = None
    shape: tuple | None = None  # a group's axes (axis 0 fastest) and the topology dimension each belongs to
    algorithm_dims: tuple | None = None

    def issue(self, run, layer: int, phase: str, comm, **kwargs):
        """`run.issue` over this communicator."""
        if self.shape is not None:
            kwargs.update(shape=self.shape, algorithm_dims=self.algorithm_dims)
        return run.issue(layer, phase, comm, self.dims, group=self.group, **kwargs)

    def on(self, system):
        """The system.collectives.Communicator this is on `system`'s NPU."""
        return system.communicator(self.dims, self.group, self.shape, self.algorithm_dims)


@dataclass(frozen=True)
class PassComms:
    """The communicator of each pass: forward and input gradient (model), weight gradient (data)."""

    fwd: Communicator
    ig: Communicator
    wg: Communicator


def pass_role(run, comms: list[PassComms]) -> Role:
    """The system.lockstep.Role of a loop that issues layer i's collectives over `comms[i]` (and nothing
    else depends on the NPU): one slot per pass and communicator, with the kinds issued there."""
    slots: dict = {}
    for layer, layer_comms in zip(run.workload.layers, comms):
        for phase in ("fwd", "ig", "wg"):
            comm = getattr(layer, f"{phase}_comm")
            if comm.active:
                slots.setdefault((phase, getattr(layer_comms, phase)), set()).add(comm.kind)
    return Role(0, tuple((comm.on(run.system), tuple(sorted(kinds))) for (_phase, comm), kinds in slots.items()))


def every_dimension_role(run) -> Role:
    """The Role of a loop whose every collective spans every dimension (DLRM, MICRO)."""
    every = Communicator(dims=tuple(range(len(run.system.topology.dim_sizes))))
    return pass_role(run, [PassComms(every, every, every)] * len(run.workload.layers))


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
    split = next(d for d in range(len(sizes)) if prod(sizes[:d + 1]) > group_size)
    inner = group_size // prod(sizes[:split])  # the split dimension's part inside a model group
    if group_size % prod(sizes[:split]) or sizes[split] % inner:
        raise ConfigError(f"{where}: model_parallel_NPU_group: {group_size} does not split dimension {split} "
                          f"({sizes[split]} NPUs after {prod(sizes[:split])}) into whole parts")
    block = npu // group_size
    model = tuple(range(block * group_size, (block + 1) * group_size))
    data = tuple(range(npu % group_size, npus, group_size))
    return (Communicator(group=model, shape=(*sizes[:split], inner), algorithm_dims=tuple(range(split + 1))),
            Communicator(group=data, shape=(sizes[split] // inner, *sizes[split + 1:]),
                         algorithm_dims=tuple(range(split, len(sizes)))))


class _Axes:
    """A communicator's axes seen as a topology (dimension sizes, NPU count), to split it as one."""

    def __init__(self, sizes: tuple):
        self.dim_sizes = sizes
        self.npus = prod(sizes)


def split_within(block, npu: int, group_size: int, where: str) -> tuple[Communicator, Communicator]:
    """(model, data) communicators inside `block` (a system.collectives.Communicator holding `npu`) when
    each `group_size` consecutive ranks of it form a model-parallel group: split_model_data over the block's
    axes, as explicit groups whose axes run the algorithms of the block's."""
    rank = block.members.index(npu)
    model, data = split_model_data(_Axes(block.sizes), rank, group_size, where)
    return _lifted(model, block, rank), _lifted(data, block, rank)


def _lifted(comm: Communicator, block, rank: int) -> Communicator:
    """`comm` (over `block`'s axes, for the NPU of `rank`) as an explicit group of `block`'s NPUs."""
    if comm.group is None:  # whole axes: every rank that differs from `rank` only on them
        sizes = tuple(block.sizes[d] for d in comm.dims)
        here = coords_of(rank, block.sizes)
        ranks = []
        for index in range(prod(sizes)):
            coords = list(here)
            for d, c in zip(comm.dims, coords_of(index, sizes)):
                coords[d] = c
            ranks.append(npu_of(coords, block.sizes))
        comm = Communicator(group=tuple(ranks), shape=sizes, algorithm_dims=comm.dims)
    return Communicator(group=tuple(block.members[r] for r in comm.group), shape=comm.shape,
                        algorithm_dims=tuple(block.algorithm_dims[d] for d in comm.algorithm_dims))


def pass_comms(policy: str, topology, npu: int, options: dict, where: str) -> PassComms:
    """The communicators of `policy` (a loop keyword or a HYBRID_CUSTOMIZED layer token) for `npu`."""
    every = Communicator(dims=tuple(range(len(topology.dim_sizes))))
    rest = Communicator(dims=tuple(range(1, len(topology.dim_sizes))))
    first = Communicator(dims=(0,))
    nobody = Communicator(dims=())
    if policy in ("DATA", "MICRO", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED"):
        return PassComms(nobody, nobody, every)
    if policy in ("MODEL", "DISTRIBUTED_INFERENCE"):
        return PassComms(every, every, nobody)
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
