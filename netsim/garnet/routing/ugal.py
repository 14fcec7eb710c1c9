"""`ugal`: UGAL-L on a dragonfly (BookSim's `ugal_dragonflynew`): at its source router a packet
between groups goes minimally (local, global, local) or through an intermediate group (local,
global, local, global, local), whichever the local queues favour.

Per packet an intermediate node is drawn uniformly among all NPUs (a seeded hash, as every
per-packet draw); a packet within one group, or whose intermediate node is in the source or the
destination group, goes minimally. Otherwise the source router compares the credits in use (flits
sent and not yet credited, over all VCs) of the two routes' first outputs: minimal if
q_min <= 2 * q_nonminimal + 30 flits (BookSim's rule and threshold), else through the
intermediate group: over the source group's global link to it, across that group to its router
with the global link to the destination's group, over that link and on to the destination. (BookSim's detour goes to the intermediate node's own router, one local hop
more in that group at times; going through the group, as Kim et al.'s UGAL does, keeps the three
VC classes below deadlock-free.)

VC classes (3, one VC each at `garnet.vcs = 3`, BookSim's count): a hop's class is the number of
global links the packet has crossed before it. Deadlock freedom: classes only grow along a route,
and within a class a route takes at most one local hop and then its global hop (or ejects), so
the only dependencies inside a class go from a local link to a global link: no cycle.
"""

from __future__ import annotations

from netsim.garnet.routing.base import CHOOSE, HOPS, RoutingUnit, free_credits
from netsim.topology import Topology

THRESHOLD = 30  # flits: BookSim's bias towards the minimal route


class UGAL(RoutingUnit):
    """`ugal`: minimal or through a random intermediate group, chosen at the source (module docstring)."""

    name = "ugal"
    kinds = ("dragonfly",)
    per_packet = True
    lookup = False  # the choice is made at the source router
    periodic = False

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        super().__init__(topology, seed, dateline)
        self.wiring = topology.dragonfly
        self.global_links = [topology.graph.edges[link.src, link.dst].get("tier") == "global"
                             for link in topology.links]
        self.phases = dateline  # False: the test-only switch that lets every hop use any VC
        self._tables: dict[tuple, tuple] = {}

    def check_vcs(self, vcs_of_dim, dateline: bool) -> None:
        if dateline:
            self.need_classes(vcs_of_dim, 3, "a class per global link crossed before a hop: 0, 1 or 2")

    def packet_route(self, network, message) -> dict:
        src, dst = message.src, message.dst
        wiring = self.wiring
        group_size = wiring.a * wiring.p
        home, target = src // group_size, dst // group_size
        middle = self.draw(src, dst) % self.topology.npus // group_size if home != target else home
        minimal = self._table(network, src, dst, target)
        if middle in (home, target):
            return minimal[0]
        detour = self._table(network, src, dst, middle)
        return {CHOOSE: (minimal, detour)}

    def _table(self, network, src: int, dst: int, middle: int) -> tuple:
        """(table, the full VC range of its first router-to-router output) of the route from `src`
        to `dst` through group `middle` (the destination's group: the minimal route)."""
        key = (src, dst, middle)
        found = self._tables.get(key)
        if found is None:
            links = network.path_links(self._path(src, dst, middle))
            classes, crossed = [], 0
            for link_id in links:
                classes.append((crossed, 3) if self.phases else (0, 1))
                crossed += self.global_links[link_id]
            table, hops = network.path_table(links, classes, dst)
            table[HOPS] = hops
            first = next((link_id for link_id in links if network.between_routers[link_id]), None)
            found = self._tables[key] = (table, network.hop_entry(first, 0, 1) if first is not None else None)
        return found

    def _path(self, src: int, dst: int, middle: int) -> list[int]:
        """Node path from `src` to `dst` through group `middle` (the minimal one if it is the destination's)."""
        wiring, npus = self.wiring, self.topology.npus
        if middle == dst // (wiring.a * wiring.p) or src == dst:
            return list(self.topology.route(src, dst))
        first, last = wiring.router_of(src), wiring.router_of(dst)
        home, target = first // wiring.a, last // wiring.a
        routers = [first, wiring.exit_router(home, middle), wiring.exit_router(middle, home),
                   wiring.exit_router(middle, target), wiring.exit_router(target, middle), last]
        hops = [r for i, r in enumerate(routers) if i == 0 or r != routers[i - 1]]
        return [src, *(npus + r for r in hops), dst]

    def output(self, router, packet) -> tuple:
        route = packet.route
        choice = route.get(CHOOSE)
        if choice is not None:  # at the source router: UGAL-L's choice
            (minimal, q_min), (detour, q_detour) = choice
            cycle = router.clock.cycle
            route = packet.route = minimal if _used(q_min, cycle) <= 2 * _used(q_detour, cycle) + THRESHOLD else detour
        return route[router.node]


def _used(entry: tuple, cycle: int) -> int:
    """Credits in use (flits sent, not yet credited back) over the VCs of a route entry."""
    out, lo, hi = entry
    return (hi - lo) * out.depth - free_credits(entry, cycle)
