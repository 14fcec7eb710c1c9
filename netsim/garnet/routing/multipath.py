"""Multipath units over a fabric's equal minimal paths (`Topology.paths`: a fat-tree's up ports, a
rail cluster's spine).

- `ecmp`: a message's path is drawn per message by a seeded hash of (seed, source, destination,
  the pair's message count), as a switch hashes a flow: every packet of a message on that one
  path (in order), and two large flows may collide on a link while others stay idle. The other
  backends draw the same path for the same message (`Topology.tie_breaker(multipath=True)`).
- `spray`: every packet draws its own path the same way (per the pair's packet count): a
  message's load spreads evenly, its packets arrive out of order (the NIC counts them).
- `adaptive`: at every router with a choice, the candidate output whose VCs have the most free
  credits now (ties: the default, d-mod-k, path's), chosen once per packet per router when it is
  routed (BookSim's `anca` going up a fat-tree; BookSim draws two candidates, this takes the best
  of all). (`adaptive` on meshes and tori: escape.py.)

Deadlock freedom: every path is up*/down* (up to a nearest common ancestor or a spine, then only
down), whichever up port or spine is taken, so any VC may be used on every hop: no channel
dependency leads from a down link to an up link, and up links only lead up, so the
channel-dependency graph is acyclic.
"""

from __future__ import annotations

from netsim.garnet.routing.base import RoutingUnit, free_credits
from netsim.topology import Topology

MULTIPATH_KINDS = ("fat-tree", "rail")


class ECMP(RoutingUnit):
    """`ecmp`: one minimal path per message, drawn by a seeded hash (see the module docstring)."""

    name = "ecmp"
    kinds = MULTIPATH_KINDS

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        super().__init__(topology, seed, dateline)
        self.use_ties(topology.tie_breaker(seed, multipath=True))


class Spray(RoutingUnit):
    """`spray`: a minimal path drawn per packet (see the module docstring)."""

    name = "spray"
    kinds = MULTIPATH_KINDS
    per_packet = True
    periodic = False

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        super().__init__(topology, seed, dateline)
        self.pick = topology.tie_breaker(seed, multipath=True).pick

    def packet_route(self, network, message) -> dict:
        return network.route(message.src, message.dst, self.pick(message.src, message.dst))[0]


class Adaptive(RoutingUnit):
    """`adaptive` on a fat-tree or rail cluster: minimal, each router choosing by free credits (see
    the module docstring)."""

    name = "adaptive"
    kinds = MULTIPATH_KINDS
    per_packet = True
    lookup = False

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        super().__init__(topology, seed, dateline)
        self.network = None
        self._options: dict[tuple, tuple] = {}  # (router, source, destination) -> candidate entries

    def packet_route(self, network, message) -> dict:
        """An empty table, filled router by router as the packet is routed."""
        self.network = network
        return {}

    def output(self, router, packet) -> tuple:
        node = router.node
        route = packet.route
        entry = route.get(node)
        if entry is None:
            message = packet.msg
            key = (node, message.src, message.dst)
            options = self._options.get(key)
            if options is None:
                options = self._options[key] = self._candidates(node, message.src, message.dst)
            entry = options[0]
            if len(options) > 1:
                cycle = router.clock.cycle
                most = free_credits(entry, cycle)
                for option in options[1:]:
                    free = free_credits(option, cycle)
                    if free > most:
                        entry, most = option, free
            route[node] = entry
        return entry

    def _candidates(self, node: int, src: int, dst: int) -> tuple:
        """The route entries a packet from `src` to `dst` may take at router `node`."""
        entries = []
        for ties, _ in self.topology.paths(src, dst):
            entry = self.network.route(src, dst, ties)[0].get(node)
            if entry is not None and entry not in entries:
                entries.append(entry)
        return tuple(entries)
