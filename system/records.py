"""What the system layer measures: per phase of each chunk, and per collective."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class PhaseRecord:
    """One chunk's pass through one phase: where, what, how long it queued and how long it ran."""

    dim: int | None  # None: a flat phase over the whole communicator (one-* algorithms, rooted collectives, groups)
    op: str  # "reduce-scatter" | "all-gather" | "all-reduce" | "all-to-all" | ...
    algorithm: str
    nbytes: int  # data the phase starts with, per NPU
    queued_at: float
    started_at: float | None = None  # None: not started yet
    finished_at: float | None = None  # None: not finished yet

    @property
    def queueing_delay_ns(self) -> float:
        """NaN until the phase has started."""
        return math.nan if self.started_at is None else self.started_at - self.queued_at

    @property
    def network_delay_ns(self) -> float:
        """NaN until the phase has finished."""
        return math.nan if self.finished_at is None else self.finished_at - self.started_at


@dataclass
class CollectiveRecord:
    """One collective on one NPU: its size, time span and every chunk's phases."""

    kind: str
    nbytes: int
    npu: int
    dims: tuple
    issued_at: float
    finished_at: float = 0.0
    chunks: list = field(default_factory=list)  # list[list[PhaseRecord]]
    # this NPU's share of the bytes the collective puts on the network (its phases' group totals
    # over the group sizes): summed over the NPUs of the collective, all the bytes it sends
    planned_bytes: float = 0.0

    @property
    def duration_ns(self) -> float:
        return self.finished_at - self.issued_at

    def phase_delays(self) -> list[tuple[float, float]]:
        """Per phase index: (mean queueing delay, mean network delay) over chunks, in ns."""
        if not self.chunks:
            return []
        result = []
        for index in range(max(len(phases) for phases in self.chunks)):
            phases = [chunk[index] for chunk in self.chunks if index < len(chunk)]
            result.append((sum(p.queueing_delay_ns for p in phases) / len(phases),
                           sum(p.network_delay_ns for p in phases) / len(phases)))
        return result
