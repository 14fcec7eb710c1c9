"""Collectives as chunks walking phases: the plan of phases per collective kind and its execution.

A collective of D bytes on the dimensions `dims` is split into `preferred-dataset-splits`
chunks. Each chunk walks its phases in order; a phase runs one algorithm on one dimension, after
waiting for a slot in that dimension's queue. Multi-dimensional all-reduce is hierarchical:
reduce-scatter dimension by dimension, then all-gather back in reverse (with localBWAware the
last dimension runs one all-reduce in between; with baseline every dimension runs a full
all-reduce).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Phase:
    """One step of a chunk's plan: run `op` on `dim` starting with `nbytes` per NPU."""

    dim: int
    op: str
    nbytes: int


def plan_phases(kind: str, nbytes: int, dims: Sequence[int], sizes: Sequence[int], optimization: str) -> list[Phase]:
    """The phases one chunk of `nbytes` walks for collective `kind` over `dims` (sizes: per dim)."""
    dims = [d for d in dims if sizes[d] > 1]
    phases: list[Phase] = []
    if kind == "reduce-scatter":
        for d in dims:
            phases.append(Phase(d, "reduce-scatter", nbytes))
            nbytes = max(1, nbytes // sizes[d])
    elif kind == "all-gather":
        for d in dims:
            phases.append(Phase(d, "all-gather", nbytes))
            nbytes *= sizes[d]
    elif kind == "all-reduce":
        if optimization == "baseline" or len(dims) <= 1:
            return [Phase(d, "all-reduce", nbytes) for d in dims]
        down = []
        for d in dims[:-1]:
            down.append(Phase(d, "reduce-scatter", nbytes))
            nbytes = max(1, nbytes // sizes[d])
        middle = Phase(dims[-1], "all-reduce", nbytes)
        up = [Phase(p.dim, "all-gather", max(1, p.nbytes // sizes[p.dim])) for p in reversed(down)]
        phases = down + [middle] + up
    else:
        raise ValueError(f"collective '{kind}' is not supported yet")
    return phases


def split_chunks(nbytes: int, chunks: int) -> list[int]:
    """Split a collective into `chunks` near-equal whole-byte chunks (no empty chunk)."""
    chunks = max(1, min(chunks, nbytes))
    base, extra = divmod(nbytes, chunks)
    return [base + (1 if i < extra else 0) for i in range(chunks)]
