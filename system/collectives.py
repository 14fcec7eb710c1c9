"""Collectives as chunks walking phases: communicators and the plan of phases per collective kind.

A collective of D bytes over a communicator is split into `preferred-dataset-splits` chunks.
Each chunk walks its phases in order; a phase runs one algorithm on one dimension's group (or,
for flat phases, on the whole communicator). Multi-dimensional collectives are hierarchical:

- reduce-scatter dimension by dimension (each phase keeps 1/p of the data);
- all-gather dimension by dimension (each phase multiplies the data by p); in ASTRA-sim's order,
  the last dimension first (`all_gather_order`);
- all-reduce with `localBWAware`: reduce-scatter on all but the last dimension, all-reduce on the
  last, all-gather back in reverse; with `baseline`: a full all-reduce on every dimension. A
  dimension whose algorithm only all-reduces (double-binary-tree) runs, as in ASTRA-sim, a full
  all-reduce of the unchanged data in both its reduce-scatter and its all-gather place (the second
  one `repeat`s the first: its data is reduced already);
- all-to-all: one all-to-all per dimension, each moving the whole D (blocks are routed one
  coordinate at a time).

Broadcast, reduce, gather, scatter and barrier, collectives over an explicit NPU group, and the
`one-*` algorithms are one flat phase over the whole communicator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from netsim.topology.base import coords_of, npu_of

COLLECTIVES = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast", "reduce", "gather",
               "scatter", "barrier")
DIMENSIONAL = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all")  # phased per dimension


@dataclass(frozen=True)
class Communicator:
    """The NPUs a collective runs over, in rank order, and the dimensions they span (dim 0 fastest).

    Over topology dimensions, `dims` are those dimensions. An explicit NPU group has no dimensions
    (one flat phase), unless it is given a shape: then `dims` are its own axes (axis 0 fastest in
    rank order), each running the algorithm of topology dimension `algorithm_dims[axis]` -- as
    ASTRA-sim v1 splits a dimension in two when a model-parallel group ends inside it.
    """

    members: tuple
    dims: tuple  # topology dimensions; a shaped group's axes; () for an unshaped group
    sizes: tuple  # size of each of `dims` (an unshaped group: (len(members),))
    algorithm_dims: tuple = ()  # per entry of `dims`, the topology dimension whose algorithm it runs
    shaped: bool = False
    # (npu, dim) -> `peers`: every phase of every chunk asks again (32 NPUs worked out each time cost a 1024-NPU
    # all-reduce 3% of its run)
    _peers: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def over_dims(cls, topology, npu: int, dims: Sequence[int]) -> "Communicator":
        dims = tuple(sorted(set(dims)))
        sizes = tuple(topology.dim_sizes[d] for d in dims)
        base = list(topology.coords(npu))
        members = []
        for rank in range(_product(sizes)):
            for d, c in zip(dims, coords_of(rank, sizes)):
                base[d] = c
            members.append(topology.npu_at(base))
        return cls(tuple(members), dims, sizes, dims)

    @classmethod
    def of_group(cls, group: Sequence[int], shape: Sequence[int] | None = None,
                 algorithm_dims: Sequence[int] | None = None) -> "Communicator":
        if shape is None:
            return cls(tuple(group), (), (len(group),))
        return cls(tuple(group), tuple(range(len(shape))), tuple(shape), tuple(algorithm_dims), shaped=True)

    def algorithm_dim(self, dim: int) -> int:
        """The topology dimension whose algorithm the phases along `dim` run."""
        return self.algorithm_dims[self.dims.index(dim)]

    def size(self, dim: int) -> int:
        return self.sizes[self.dims.index(dim)]

    def peers(self, topology, npu: int, dim: int) -> tuple:
        """The members that differ from `npu` only along `dim`, in rank order."""
        group = self._peers.get((npu, dim))
        if group is None:
            group = self._peers[npu, dim] = self._group_along(topology, npu, dim)
        return group

    def _group_along(self, topology, npu: int, dim: int) -> tuple:
        """`peers`, worked out."""
        if not self.shaped:
            return tuple(topology.peers(npu, dim))
        coords = list(coords_of(self.members.index(npu), self.sizes))
        group = []
        for c in range(self.sizes[dim]):
            coords[dim] = c
            group.append(self.members[npu_of(coords, self.sizes)])
        return tuple(group)


def _product(values) -> int:
    result = 1
    for v in values:
        result *= v
    return result


@dataclass(frozen=True)
class Phase:
    """One step of a chunk's plan: run `op` on `dim` (None: flat, over the whole communicator)."""

    dim: int | None
    op: str
    nbytes: int
    repeat: bool = False  # an all-reduce of data this dimension has all-reduced already (costs, changes nothing)


def plan_phases(kind: str, nbytes: int, comm: Communicator, flat: bool, optimization: str,
                order: Sequence[int] | None = None, whole: frozenset = frozenset()) -> list[Phase]:
    """The phases one chunk of `nbytes` walks for `kind` over `comm`, visiting dimensions in `order`
    (an all-reduce's gathering half visits them backwards). Dimensions in `whole`
    can only all-reduce: a localBWAware all-reduce runs a full all-reduce there in each of its
    reduce-scatter and all-gather places."""
    if flat or kind not in DIMENSIONAL or not comm.dims:
        return [Phase(None, kind, nbytes)] if len(comm.members) > 1 else []
    size_of = dict(zip(comm.dims, comm.sizes))
    dims = [d for d in (order if order is not None else comm.dims) if size_of[d] > 1]
    if kind == "all-to-all" or (kind == "all-reduce" and (optimization == "baseline" or len(dims) <= 1)):
        return [Phase(d, kind, nbytes) for d in dims]
    phases: list[Phase] = []
    if kind == "all-gather":
        for d in dims:
            phases.append(Phase(d, "all-gather", nbytes))
            nbytes *= size_of[d]
        return phases
    scatter_dims = dims if kind == "reduce-scatter" else dims[:-1]
    for d in scatter_dims:
        if d in whole:
            phases.append(Phase(d, "all-reduce", nbytes))
        else:
            phases.append(Phase(d, "reduce-scatter", nbytes))
            nbytes = max(1, nbytes // size_of[d])
    if kind == "all-reduce":
        phases.append(Phase(dims[-1], "all-reduce", nbytes))
        for p in reversed(phases[:-1]):
            if p.op == "all-reduce":
                phases.append(Phase(p.dim, "all-reduce", p.nbytes, repeat=True))
            else:
                phases.append(Phase(p.dim, "all-gather", max(1, p.nbytes // size_of[p.dim])))
    return phases


def all_gather_order(dims: tuple) -> tuple:
    """ASTRA-sim's all-gather visits dimensions last first (the mirror of a reduce-scatter), before any
    inter-dimension policy reorders them."""
    return dims[::-1]


def split_chunks(nbytes: int, chunks: int) -> list[int]:
    """Split a collective into `chunks` near-equal whole-byte chunks (no empty chunk)."""
    chunks = max(1, min(chunks, nbytes))
    base, extra = divmod(nbytes, chunks)
    return [base + (1 if i < extra else 0) for i in range(chunks)]


def astra_chunks(nbytes: int, splits: int, minimum: int) -> list[int]:
    """ASTRA-sim 2.x's chunks: `nbytes // splits` bytes each (at least `minimum`, the NPU count, for
    collectives other than all-gather), as many as it takes to cover nbytes -- so 3 MiB + 7 bytes in
    4 splits is 5 chunks of 786,433 bytes (Sys::determine_chunk_size and generate_collective)."""
    chunk = nbytes // splits
    if chunk < minimum:
        return [minimum] * splits
    return [chunk] * -(-nbytes // chunk)
