"""Dragonfly wired as BookSim's `dragonflynew`: groups of `a` routers, each with `p` NPUs and `h`
global links; the routers of a group are fully connected by local links, and every pair of the
a*h + 1 groups is joined by one global link (checked against BookSim's link table in the tests).

Numbering (BookSim's): router r is in group r // a at index r % a, node npus + r; NPU t hangs on
router t // p directly (no router of its own, as BookSim's terminals). Global port i of router
(G, d) has global index j = d*h + i and leads to group j, or j + 1 when j >= G, arriving at the
router of index j' // h of that group, where j' is G, or G - 1 when G is above the target group.

Routing is minimal (BookSim's `min`): a local hop to the router of the source group that holds
the global link to the destination group, that global link, and a local hop to the destination's
router (each local hop skipped when already there); at most 3 router-to-router links. Links carry
`tier` ("terminal", "local" or "global") in the graph, which the packet backend's `dragonfly-min`
routing unit reads for its VC classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from netsim.config import positive_int, setting
from netsim.topology.base import Dimension, Topology, add_link_pair
from netsim.topology.graph import LinkGraph
from netsim.units import parse_link_bandwidth, parse_time


@dataclass(frozen=True)
class DragonflySpec:
    """`kind = "dragonfly"`: `p` NPUs and `h` global links per router, `a` routers per group."""

    p: int = setting(parse=positive_int, help="NPUs per router")
    a: int = setting(parse=positive_int, help="routers per group (fully connected by local links)")
    h: int = setting(parse=positive_int, help="global links per router (groups = a*h + 1)")
    bandwidth: float = setting(parse=parse_link_bandwidth, help="NPU-router link bandwidth, e.g. '50GB/s'")
    latency: float = setting(parse=parse_time, help="NPU-router link latency, e.g. '1ns'")
    local_bandwidth: float = setting(0.0, parse=parse_link_bandwidth, help="local (in-group) link bandwidth (default: bandwidth)")
    local_latency: float = setting(0.0, parse=parse_time, help="local link latency (default: latency)")
    global_bandwidth: float = setting(0.0, parse=parse_link_bandwidth, help="global link bandwidth (default: bandwidth)")
    global_latency: float = setting(0.0, parse=parse_time, help="global link latency (default: latency)")


class DragonflyWiring:
    """Router numbering and global links of a dragonfly (see the module docstring)."""

    def __init__(self, spec: DragonflySpec):
        self.p, self.a, self.h = spec.p, spec.a, spec.h
        self.groups = spec.a * spec.h + 1
        self.routers = spec.a * self.groups
        self.npus = self.routers * spec.p

    @property
    def group_npus(self) -> int:
        return self.a * self.p

    def router_of(self, npu: int) -> int:
        return npu // self.p

    def global_link(self, router: int, port: int) -> int:
        """The router that global port `port` of `router` leads to."""
        group, index = divmod(router, self.a)
        j = index * self.h + port
        target = j if j < group else j + 1
        j_back = group if group < target else group - 1
        return target * self.a + j_back // self.h

    def exit_router(self, group: int, target: int) -> int:
        """The router of `group` that holds the global link to group `target`."""
        j = target if target < group else target - 1
        return group * self.a + j // self.h


def minimal_route(topo: Topology, src: int, dst: int, ties: int, wiring: DragonflyWiring) -> list[int]:
    """Local, global, local (each local hop only where needed); `ties` is unused (no route has a tie)."""
    if src == dst:
        return [src]
    first, last = wiring.router_of(src), wiring.router_of(dst)
    routers = [first]
    group, target = first // wiring.a, last // wiring.a
    if group != target:
        exit_router = wiring.exit_router(group, target)
        entry = wiring.exit_router(target, group)
        routers += [exit_router, entry]
    routers.append(last)
    hops = [r for i, r in enumerate(routers) if i == 0 or r != routers[i - 1]]
    return [src, *(topo.npus + r for r in hops), dst]


def build_dragonfly(spec: DragonflySpec, name: str) -> Topology:
    wiring = DragonflyWiring(spec)
    npus, a = wiring.npus, spec.a
    local_bw = spec.local_bandwidth or spec.bandwidth
    global_bw = spec.global_bandwidth or spec.bandwidth
    local_lat = spec.local_latency or spec.latency
    global_lat = spec.global_latency or spec.latency
    graph = LinkGraph()
    graph.add_nodes_from(range(npus))

    for npu in range(npus):
        add_link_pair(graph, npu, npus + wiring.router_of(npu), spec.bandwidth, spec.latency, 0, tier="terminal")
    for router in range(wiring.routers):
        group = router // a
        for other in range(router + 1, group * a + a):
            add_link_pair(graph, npus + router, npus + other, local_bw, local_lat, 0, tier="local")
        for port in range(spec.h):  # each global link pairs with the one back (added from the other end)
            graph.add_edge(npus + router, npus + wiring.global_link(router, port), bandwidth=global_bw,
                           latency=global_lat, dim=0, tier="global")
    # cut between the first half of the groups and the rest: one global link per pair of groups
    # across it (each way), or the NPUs' own links if fewer
    half = wiring.groups // 2
    bisection = min(half * (wiring.groups - half) * global_bw, (npus // 2) * spec.bandwidth)
    diameter = 5 if a > 1 else 3  # terminal, local, global, local, terminal (there are always >= 2 groups)
    dims = [Dimension("switch", npus, spec.bandwidth, spec.latency)]
    topology = Topology(name, "dragonfly", graph, npus, dims, partial(minimal_route, wiring=wiring), bisection,
                        diameter, direct_terminals=True)
    topology.dragonfly = wiring  # its groups, for traffic patterns (bad-dragon)
    return topology
