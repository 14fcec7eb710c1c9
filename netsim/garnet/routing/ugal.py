"""`ugal`: UGAL-L on a dragonfly as BookSim's `ugal_dragonflynew` routes: at its source router a
packet between groups goes minimally (local, global, local) or through a random intermediate
router, whichever the local queues favour.

Per packet an intermediate node is drawn uniformly among all NPUs (a seeded hash, as every
per-packet draw); a packet within one group, or whose intermediate node is in the source or the
destination group, goes minimally. Otherwise the source router compares the credits in use (flits
sent and not yet credited, over all VCs) of the two routes' first outputs: minimal if
q_min <= 2 * q_nonminimal + 30 flits (BookSim's rule and threshold), else the detour: minimally to
the intermediate node's router (local, global, and a local hop to it unless the global link lands
there), then minimally on to the destination (a local hop to the router with the global link to
the destination's group unless it is there, global, local). The detour may pass the router its
global link lands on twice (there, to the intermediate router and back): its table moves on to the
second phase's at the intermediate router.

VC classes (3, one VC each at `garnet.vcs = 3`, BookSim's count and its phases):
- class 0: the detour's first phase, to the intermediate router (local, global, local);
- class 1: the minimal part's hop before its global link (from the source, or from the
  intermediate router);
- class 2: the minimal part's global hop and the local hop after it; a route within one group.
Deadlock: a class-1 hop leads only to a class-2 global hop, a class-2 global hop to a class-2
local hop or ejection, a class-2 local hop to ejection: classes 1 and 2 hold no cycle, and every
class-0 route ends in them. Class 0 does not avoid deadlock by construction (nor does BookSim's): a
local link's class-0 VC carries both first hops (which wait for a class-0 global link) and hops in
the intermediate group (reached from a class-0 global link), so the dependencies of class 0 close
cycles through several groups. A deadlock needs every class-0 buffer around such a cycle full and
headed by a source group's packet waiting for the next global link; neither BookSim's runs nor
netsim's saturation runs (tests/garnet/test_multipath_routing.py, both router models) ever met one.
"""

from __future__ import annotations

from netsim.garnet.routing.base import CHOOSE, HOPS, NEXT, RoutingUnit, follow, free_credits, global_links
from netsim.topology import Topology

THRESHOLD = 30  # flits: BookSim's bias towards the minimal route
DETOUR, BEFORE_GLOBAL, FROM_GLOBAL = (0, 3), (1, 3), (2, 3)  # the VC classes (module docstring)


class UGAL(RoutingUnit):
    """`ugal`: minimal or through a random intermediate router, chosen at the source (module docstring)."""

    name = "ugal"
    kinds = ("dragonfly",)
    per_packet = True
    lookup = False  # the choice is made at the source router, and a detour's table moves on
    periodic = False

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        super().__init__(topology, seed, dateline)
        self.wiring = topology.dragonfly
        self.global_links = global_links(topology)
        self.phases = dateline  # False: the test-only switch that lets every hop use any VC
        self._tables: dict[tuple, tuple] = {}

    def check_vcs(self, vcs_of_dim, dateline: bool) -> None:
        if dateline:
            self.need_classes(vcs_of_dim, 3, "the detour's first phase, and before and from the minimal global link")

    def packet_route(self, network, message) -> dict:
        src, dst = message.src, message.dst
        group_npus = self.wiring.group_npus
        home, target = src // group_npus, dst // group_npus
        minimal = self._table(network, src, dst, -1)
        if home == target:
            return minimal[0]
        middle = self.draw(src, dst) % self.topology.npus
        if middle // group_npus in (home, target):
            return minimal[0]
        return {CHOOSE: (minimal, self._table(network, src, dst, middle))}

    def _table(self, network, src: int, dst: int, middle: int) -> tuple:
        """(table, the full VC range of its first router-to-router output) of the minimal route
        from `src` to `dst` (`middle` < 0) or of the detour through node `middle`'s router."""
        key = (src, dst, middle)
        found = self._tables.get(key)
        if found is None:
            if middle < 0:
                links = network.path_links(self.topology.route(src, dst))
                table, hops = network.path_table(links, self._minimal_classes(links), dst)
                table[HOPS] = hops
            else:
                links, rest = self._detour(network, src, dst, middle)
                table, hops = network.path_table(links, [DETOUR if self.phases else (0, 1)] * len(links), None)
                after, hops_after = network.path_table(rest, self._minimal_classes(rest), dst)
                after[HOPS] = hops + hops_after  # (read from the table a packet ends with)
                table[NEXT] = after
            first = next((link_id for link_id in links if network.between_routers[link_id]), None)
            found = self._tables[key] = (table, network.hop_entry(first, 0, 1) if first is not None else None)
        return found

    def _detour(self, network, src: int, dst: int, middle: int) -> tuple[list[int], list[int]]:
        """The link ids of the detour's two phases: from `src` to node `middle`'s router, and from
        there to `dst`."""
        wiring, npus = self.wiring, self.topology.npus
        first, turn, last = wiring.router_of(src), wiring.router_of(middle), wiring.router_of(dst)
        home, between, target = first // wiring.a, turn // wiring.a, last // wiring.a
        there = [first, wiring.exit_router(home, between), wiring.exit_router(between, home), turn]
        on = [turn, wiring.exit_router(between, target), wiring.exit_router(target, between), last]
        return (network.path_links([src, *(npus + r for r in _distinct(there))]),
                network.path_links([*(npus + r for r in _distinct(on)), dst]))

    def _minimal_classes(self, link_ids: list[int]) -> list[tuple[int, int]]:
        """The VC class of each hop of a minimal route (or part): BEFORE_GLOBAL before its global
        link, FROM_GLOBAL on it and after it, and on every hop of a route with none."""
        if not self.phases:
            return [(0, 1)] * len(link_ids)
        crossed = not any(self.global_links[link_id] for link_id in link_ids)
        classes = []
        for link_id in link_ids:
            crossed = crossed or self.global_links[link_id]
            classes.append(FROM_GLOBAL if crossed else BEFORE_GLOBAL)
        return classes

    def output(self, router, packet) -> tuple:
        choice = packet.route.get(CHOOSE)
        if choice is not None:  # at the source router: UGAL-L's choice
            (minimal, q_min), (detour, q_detour) = choice
            cycle = router.clock.cycle
            packet.route = minimal if _used(q_min, cycle) <= 2 * _used(q_detour, cycle) + THRESHOLD else detour
        return follow(packet, router.node)


def _distinct(routers: list[int]) -> list[int]:
    """`routers` without the repeats of a router the route is already at."""
    return [r for i, r in enumerate(routers) if i == 0 or r != routers[i - 1]]


def _used(entry: tuple, cycle: int) -> int:
    """Credits in use (flits sent, not yet credited back) over the VCs of a route entry."""
    out, lo, hi = entry
    return (hi - lo) * out.depth - free_credits(entry, cycle)
