"""Multi-dimensional topologies built level by level: each dimension is a ring, a mesh line,
fully-connected group or switch, with its own size, bandwidth and latency (ASTRA-sim's
hierarchical topology).

NPU ids put dimension 0 fastest. A torus is the special case where every level is a ring, a mesh
where every level is a line. Routing is dimension-ordered: dimension 0 is corrected first, then 1,
and so on (XY on a 2-D mesh); within a ring the shorter way round (the caller breaks antipode ties:
`Topology.route`), along a line straight, within a fully-connected group directly, within a switch
group through that group's switch.
"""

from __future__ import annotations


from dataclasses import dataclass
from functools import partial

from netsim.config import choice, non_negative_int, positive_int, setting
from netsim.topology.base import Dimension, Topology, add_link_pair, coords_of, line_steps, npu_of, ring_steps
from netsim.topology.graph import LinkGraph
from netsim.units import parse_link_bandwidth, parse_time

LEVEL_KINDS = ("ring", "mesh", "fully-connected", "switch")


@dataclass(frozen=True)
class LevelSpec:
    """One `[[topology.dims]]` entry of a hierarchical topology."""

    type: str = setting(parse=choice(*LEVEL_KINDS), help="ring, mesh (a line: no wrap-around link), fully-connected or switch")
    size: int = setting(parse=positive_int, help="NPUs along this dimension")
    bandwidth: float = setting(parse=parse_link_bandwidth, help="link bandwidth, e.g. '50GB/s'")
    latency: float = setting(parse=parse_time, help="link latency, e.g. '500ns'")
    nic_latency: float = setting(0.0, parse=parse_time, help="NIC latency at each end of a message on this dimension")
    router_latency: float = setting(0.0, parse=parse_time, help="latency of this dimension's switch")
    links: int = setting(1, parse=non_negative_int, help="parallel links per NPU pair (ASTRA-sim's links-count; informational)")


def level_order_route(topo: Topology, src: int, dst: int, ties: int, group_switch: dict) -> list[int]:
    """Dimension-ordered minimal path from `src` to `dst` (see module docstring); bit d of `ties`
    sends an antipode tie in ring dimension d the negative way.

    Works on NPU ids directly (this runs for every NPU pair a run uses): with dimension 0 fastest,
    coordinate d of an id is `id // stride % size`, and moving along d changes the id by a multiple
    of `stride`; `base`, the id with coordinate 0 along d, names the group (as in `group_switch`).
    """
    path = [src]
    here = src
    stride = 1
    for d, dim in enumerate(topo.dims):
        size = dim.size
        c, target = here // stride % size, dst // stride % size
        if c != target:
            base = here - c * stride
            if dim.kind == "ring":
                path.extend([base + step * stride for step in ring_steps(c, target, size, bool(ties >> d & 1))])
            elif dim.kind == "mesh":
                path.extend([base + step * stride for step in line_steps(c, target)])
            else:
                if dim.kind == "switch":
                    path.append(group_switch[d, base])
                path.append(base + target * stride)
            here = base + target * stride
        stride *= size
    return path


def level_order_waypoint(topo: Topology, src: int, dst: int) -> tuple[int, int] | None:
    """(NPU, dimension) where `level_order_route` from `src` to `dst` finishes its first dimension,
    if it goes on in another one (`Topology.waypoint`): `src` with that dimension's coordinate set
    to `dst`'s."""
    stride = 1
    for d, size in enumerate(topo.dim_sizes):
        c, target = src // stride % size, dst // stride % size
        if c != target:
            via = src + (target - c) * stride
            return None if via == dst else (via, d)
        stride *= size
    return None


def level_bisection(dim: Dimension, groups: int) -> float:
    """One-direction bandwidth across a cut that halves every group of this dimension."""
    half = dim.size // 2
    if dim.kind == "ring":
        return (1 if dim.size <= 2 else 2) * groups * dim.bandwidth
    if dim.kind == "mesh":
        return groups * dim.bandwidth
    if dim.kind == "fully-connected":
        return half * (dim.size - half) * groups * dim.bandwidth
    return half * groups * dim.bandwidth  # switch: the uplinks of half the group


def level_diameter(dim: Dimension) -> int:
    """Most hops a dimension-ordered route spends in one dimension."""
    if dim.size == 1:
        return 0
    return {"ring": dim.size // 2, "mesh": dim.size - 1, "fully-connected": 1, "switch": 2}[dim.kind]


def build_levels(name: str, kind: str, levels: list[LevelSpec], direct_terminals: bool = False) -> Topology:
    """Build the graph of a hierarchical topology (torus when every level is a ring, mesh when every
    level is a line); `direct_terminals`: see `Topology`."""
    dims = [Dimension(level.type, level.size, level.bandwidth, level.latency) for level in levels]
    sizes = tuple(d.size for d in dims)
    npus = 1
    for size in sizes:
        npus *= size
    graph = LinkGraph()
    graph.add_nodes_from(range(npus))
    group_switch: dict[tuple[int, int], int] = {}
    switch_latency: dict[int, float] = {}
    for d, (dim, level) in enumerate(zip(dims, levels)):
        if dim.size == 1:
            continue
        for npu in range(npus):
            coords = coords_of(npu, sizes)
            if coords[d] != 0:
                continue  # visit each group once, from its member with coordinate 0
            members = []
            for c in range(dim.size):
                here = list(coords)
                here[d] = c
                members.append(npu_of(here, sizes))
            if dim.kind in ("ring", "mesh"):
                pairs = [(members[i], members[(i + 1) % dim.size]) for i in range(dim.size)]
                for u, v in pairs[: 1 if dim.size == 2 else dim.size - 1 if dim.kind == "mesh" else None]:
                    add_link_pair(graph, u, v, dim.bandwidth, dim.latency, d)
            elif dim.kind == "fully-connected":
                for i, u in enumerate(members):
                    for v in members[i + 1:]:
                        add_link_pair(graph, u, v, dim.bandwidth, dim.latency, d)
            else:
                switch = npus + len(group_switch)
                group_switch[d, npu] = switch
                switch_latency[switch] = level.router_latency
                graph.add_node(switch)
                for member in members:
                    add_link_pair(graph, member, switch, dim.bandwidth, dim.latency, d)
    splittable = [dim for dim in dims if dim.size >= 2]
    bisection = min((level_bisection(dim, npus // dim.size) for dim in splittable), default=0.0)
    router = partial(level_order_route, group_switch=group_switch)
    diameter = sum(level_diameter(dim) for dim in dims)  # routes correct each dimension independently
    return Topology(name, kind, graph, npus, dims, router, bisection, diameter, switch_latency,
                    nic_latency=[level.nic_latency for level in levels], direct_terminals=direct_terminals,
                    waypoint=None if direct_terminals else level_order_waypoint)


@dataclass(frozen=True)
class HierarchicalSpec:
    """`kind = "hierarchical"`: a list of `[[topology.dims]]` levels, dimension 0 first."""

    dims: tuple = setting(parse=lambda v: v, help="a list of [[topology.dims]] tables")



def build_hierarchical(spec: HierarchicalSpec, name: str) -> Topology:
    return build_levels(name, "hierarchical", list(spec.dims))
