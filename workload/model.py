"""A workload: the training loop's name and its layers, each with compute and communication per pass."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

MAX_FIELD = 2**63 - 1  # ASTRA-sim reads sizes and times as 64-bit integers
COMM_TYPES = {"NONE": None, "ALLREDUCE": "all-reduce", "ALLGATHER": "all-gather",
              "REDUCESCATTER": "reduce-scatter", "ALLTOALL": "all-to-all"}


@dataclass(frozen=True)
class Comm:
    """A collective a layer issues in one pass (kind None = no communication)."""

    kind: str | None
    nbytes: int

    @property
    def active(self) -> bool:
        return self.kind is not None and self.nbytes > 0


@dataclass(frozen=True)
class Layer:
    """One layer: compute times in ns (ASTRA-sim cycles = ns) and the collective of each pass."""

    name: str
    reserved: int
    fwd_compute: int
    fwd_comm: Comm
    ig_compute: int
    ig_comm: Comm
    wg_compute: int
    wg_comm: Comm
    update_time: int
    parallelism: str | None = None  # per-layer strategy (HYBRID_CUSTOMIZED)
    line: int = 0


@dataclass(frozen=True)
class Workload:
    """The loop to run (`parallelism`, e.g. DATA), header options and the layers in forward order."""

    name: str
    parallelism: str
    layers: tuple
    options: dict = field(default_factory=dict)
    path: str = ""

    def with_options(self, **options) -> "Workload":
        """The same workload with header options added or replaced (e.g. bucket_size=[26214400])."""
        return replace(self, options={**self.options, **options})
