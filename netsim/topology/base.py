"""The one `Topology` type every backend and the system layer share.

A topology is a networkx DiGraph. Nodes 0..npus-1 are NPUs (in a direct network each NPU is
also its own router); nodes npus.. are switches. Every directed edge is a link with
`bandwidth` (GB/s = bytes/ns), `latency` (ns), `dim` (the logical dimension it serves, or -1)
and an integer `id`. The dimension structure (which NPUs are peers along each dimension) is
what the system layer builds its collectives on; `route()` gives the deterministic minimal path
a message takes, which the analytical backend costs and the packet backend follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Callable, Sequence

import networkx as nx


@dataclass(frozen=True)
class Dimension:
    """One logical dimension: its kind (ring, fully-connected, switch), size and link figures."""

    kind: str
    size: int
    bandwidth: float  # GB/s per link
    latency: float  # ns per link


@dataclass(frozen=True)
class Link:
    """A directed link; `id` is its row in per-link reports."""

    id: int
    src: int
    dst: int
    bandwidth: float
    latency: float
    dim: int
    kind: str


class Topology:
    """NPUs, switches, directed links, the dimension structure and the routing function."""

    def __init__(self, name: str, kind: str, graph: nx.DiGraph, npus: int, dims: Sequence[Dimension],
                 router: Callable[["Topology", int, int], list[int]], bisection_bandwidth: float, diameter: int,
                 switch_latency: dict[int, float] | None = None, nic_latency: Sequence[float] = ()):
        self.name = name
        self.kind = kind
        self.graph = graph
        self.npus = npus
        self.dims = tuple(dims)
        self.dim_sizes = tuple(d.size for d in self.dims)
        self._router = router
        self.bisection_bandwidth = bisection_bandwidth
        self.diameter_hops = diameter  # closed form from the builder; routing all pairs is O(N^2)
        self.switch_latency = dict(switch_latency or {})
        self.nic_latency = tuple(nic_latency) or tuple(0.0 for _ in self.dims)
        expected = reduce(lambda a, b: a * b, (d.size for d in self.dims), 1)
        if expected != npus:
            raise ValueError(f"dimension sizes multiply to {expected}, not {npus} NPUs")
        self.links: list[Link] = []
        for index, (u, v) in enumerate(sorted(graph.edges())):
            data = graph.edges[u, v]
            data["id"] = index
            self.links.append(Link(index, u, v, data["bandwidth"], data["latency"], data.get("dim", -1),
                                   self._link_kind(u, v)))
        self._routes: dict[tuple[int, int], tuple[int, ...]] = {}

    # ---------------------------------------------------------------- structure
    @property
    def switches(self) -> list[int]:
        return [n for n in self.graph.nodes if n >= self.npus]

    def is_switch(self, node: int) -> bool:
        return node >= self.npus

    def _link_kind(self, u: int, v: int) -> str:
        name = {False: "npu", True: "switch"}
        return f"{name[self.is_switch(u)]}-{name[self.is_switch(v)]}"

    def link(self, u: int, v: int) -> Link:
        return self.links[self.graph.edges[u, v]["id"]]

    def coords(self, npu: int) -> tuple[int, ...]:
        """Per-dimension coordinates of an NPU; dimension 0 varies fastest (ASTRA-sim's order)."""
        return coords_of(npu, self.dim_sizes)

    def npu_at(self, coords: Sequence[int]) -> int:
        return npu_of(coords, self.dim_sizes)

    def peers(self, npu: int, dim: int) -> list[int]:
        """The NPUs that differ from `npu` only along `dim`, in order of their coordinate there."""
        base = list(self.coords(npu))
        group = []
        for c in range(self.dims[dim].size):
            base[dim] = c
            group.append(self.npu_at(base))
        return group

    # ---------------------------------------------------------------- routing
    def route(self, src: int, dst: int) -> tuple[int, ...]:
        """The node path a message from `src` to `dst` takes (deterministic, minimal)."""
        key = (src, dst)
        path = self._routes.get(key)
        if path is None:
            path = tuple(self._router(self, src, dst))
            self._routes[key] = path
        return path

    def hops(self, src: int, dst: int) -> int:
        return len(self.route(src, dst)) - 1

    def routed_diameter(self) -> int:
        """The largest routed hop count between two NPUs, by routing every pair (tests check the closed form)."""
        return max((self.hops(s, d) for s in range(self.npus) for d in range(self.npus)), default=0)

    def summary(self) -> dict:
        """Figures `netsim topo` prints."""
        return {
            "name": self.name,
            "kind": self.kind,
            "npus": self.npus,
            "switches": len(self.switches),
            "links": len(self.links),
            "diameter_hops": self.diameter_hops,
            "bisection_bandwidth_GBps": self.bisection_bandwidth,
            "dims": [f"{d.kind} {d.size} ({d.bandwidth:g} GB/s, {d.latency:g} ns)" for d in self.dims],
        }


def coords_of(npu: int, sizes: Sequence[int]) -> tuple[int, ...]:
    """NPU id -> coordinates, dimension 0 fastest."""
    result = []
    for size in sizes:
        result.append(npu % size)
        npu //= size
    return tuple(result)


def npu_of(coords: Sequence[int], sizes: Sequence[int]) -> int:
    """Coordinates (wrapped into range) -> NPU id, dimension 0 fastest."""
    npu, stride = 0, 1
    for c, size in zip(coords, sizes):
        npu += (c % size) * stride
        stride *= size
    return npu


def add_link_pair(graph: nx.DiGraph, u: int, v: int, bandwidth: float, latency: float, dim: int) -> None:
    """Add the two directed links of a bidirectional connection."""
    graph.add_edge(u, v, bandwidth=bandwidth, latency=latency, dim=dim)
    graph.add_edge(v, u, bandwidth=bandwidth, latency=latency, dim=dim)


def ring_steps(src: int, dst: int, size: int) -> list[int]:
    """Coordinates visited going the shorter way round a ring (ties go the positive way)."""
    forward = (dst - src) % size
    step = 1 if forward <= size - forward else -1
    coords = []
    c = src
    while c != dst:
        c = (c + step) % size
        coords.append(c)
    return coords
