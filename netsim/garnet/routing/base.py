"""What every routing unit shares: VC classes, the keys of a packet's own route table, the unit's
interface, and the read of a candidate output's congestion.

A VC class is a slice of a port's VCs: class `index` of `count` takes VCs [index*vcs//count,
(index+1)*vcs//count); ANY takes them all. (`LOW` and `HIGH` are the classes 0 and 1 of 2, the
halves the dateline units use.)

A route table maps router id -> (output unit, lowest VC, VC bound). Units whose packets follow
their message's table answer route computation by looking it up; others give each packet a table
of its own when the NIC cuts it (`packet_route`), which may also hold, under keys no router has:
`NEXT`, the table of the route's next phase, taken at the router the current phase does not reach
(a Valiant route may pass a router once in each phase); `HOPS`, the route's router-to-router links
(statistics); `CHOOSE`, the routes a packet chooses between at its source router (UGAL).
"""

from __future__ import annotations

from netsim.errors import ConfigError
from netsim.topology import Topology
from netsim.topology.base import PairDraws

ANY, LOW, HIGH = -1, 0, 1  # VC classes of the dateline units (LOW and HIGH: class 0 and 1 of 2)
NEXT, HOPS, CHOOSE = -1, -2, -3  # keys of a packet's own table (router ids are >= 0)


def vc_range(vc_class: int, vcs: int) -> tuple[int, int]:
    """The downstream VCs [lo, hi) a hop of `vc_class` (ANY, LOW or HIGH) may take at a port with `vcs` VCs."""
    return (0, vcs) if vc_class == ANY else class_range(vc_class, 2, vcs)


def class_range(index: int, count: int, vcs: int) -> tuple[int, int]:
    """The downstream VCs [lo, hi) of class `index` of `count` at a port with `vcs` VCs."""
    return index * vcs // count, (index + 1) * vcs // count


def follow(packet, node: int) -> tuple:
    """The entry of `packet`'s own table at router `node`, moving on to the next phase's table where
    the current one has no entry (see the module docstring)."""
    route = packet.route
    entry = route.get(node)
    if entry is None:
        route = packet.route = route[NEXT]
        entry = route[node]
    return entry


def table_output(router, packet) -> tuple:
    """Route computation at `router` from the table built for `packet` (its message's, or its own):
    (output unit, lowest VC, VC bound). A unit whose `output` is this one routes by table, which
    the compiled switch allocators read inline (allocators/base.py)."""
    return packet.route[router.node]


def global_links(topology: Topology) -> list[bool]:
    """Per link id: is it a dragonfly's global link (its builder's tier "global")?"""
    return [topology.tier(link) == "global" for link in topology.links]


def free_credits(entry: tuple, cycle: int) -> int:
    """Credits of a route entry's VCs usable at `cycle`: how much room its output has downstream
    (read through the output unit's own `usable`, never its fields)."""
    out, lo, hi = entry
    return sum(out.usable(vc, cycle) for vc in range(lo, hi))


class RoutingUnit:
    """Base of the routing units: fixed routes looked up in the message's table (see `output`).

    Class attributes a unit sets: `kinds`, the topology kinds it routes (its VC classes are
    deadlock-free there; empty: any); `per_packet`, each packet gets a table of its own
    (`packet_route`); `lookup`, route computation only reads the packet's table, so a router may
    ask it for any packet at any time (the allocators' batching does: else it is off); `periodic`,
    routes depend on nothing but the message and the network's state, so the fast-forward over
    repeating states may run (a random draw per packet is not part of that state); `choices`, route
    computation offers several route entries (`options`), of which the router's VC allocation
    takes one (BookSim's route sets: allocators/base.py), instead of one (`output`);
    `classes_per_dimension`, a hop's VC class depends only on the route's hops in the hop's own
    dimension, so the network may join a route's table from its legs' (`Topology.waypoint`).
    """

    name = ""
    kinds: tuple[str, ...] = ()
    per_packet = False
    lookup = True
    periodic = True
    choices = False
    classes_per_dimension = False

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        if self.kinds and topology.kind not in self.kinds:
            raise ConfigError(f"garnet.routing = {self.name!r} routes a {' or '.join(self.kinds)}, not a "
                              f"{topology.kind} (its VC classes would not avoid deadlock there)")
        self.topology = topology
        self.use_ties(topology.tie_breaker(seed))
        self.draws = PairDraws(seed)  # per packet, of a (source, destination) pair

    def use_ties(self, breaker) -> None:
        """Take the tie bits of a new message's route from `breaker` (`Topology.tie_breaker`):
        `ties` per message, `fixed_ties` those a pair's messages all get without a draw (or None)."""
        self.ties = breaker.ties
        self.fixed_ties = breaker.fixed

    def draw(self, src: int, dst: int) -> int:
        """64 random bits for the pair's next packet (`PairDraws`: independent of the order events of
        one instant run in)."""
        return self.draws.next(src, dst)

    def check_vcs(self, vcs_of_dim, dateline: bool) -> None:
        """Refuse VC counts too small for the unit's classes (one line naming the key)."""

    def need_classes(self, vcs_of_dim, count: int, why: str) -> None:
        """Every router port needs >= `count` VCs, one per class (`why`: the classes)."""
        for d in sorted({link.dim for link in self.topology.links}):
            if vcs_of_dim(d) < count:
                raise ConfigError(f"garnet.vcs = {vcs_of_dim(d)}: {self.name} routing needs >= {count} VCs per "
                                  f"port ({why}); set garnet.vcs = {count} or more")

    def hop_classes(self, link_ids) -> list[int]:
        """The VC class (ANY, LOW or HIGH) of each hop of a message's route given by its link ids."""
        return [ANY] * len(link_ids)

    def packet_route(self, network, message) -> dict:
        """The table of the next packet of `message` (units with `per_packet`)."""
        raise NotImplementedError

    output = staticmethod(table_output)  # route computation: a lookup in the packet's table

    def options(self, router, vc) -> tuple:
        """Route computation of a unit with `choices` for the front packet of input VC `vc` at
        `router`: the route entries it may take there, in the unit's order of preference."""
        raise NotImplementedError
