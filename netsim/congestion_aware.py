"""Congestion-aware analytical backend, with ASTRA-sim 2.x's semantics (its `congestion_aware` model).

A message crosses the links of its route in order, store and forward: on each link it waits
behind the messages queued there before it (each link is a FIFO that sends one message at a
time), occupies the link for bytes / bandwidth, and reaches the link's far end one latency after
its last byte left; only then does it queue on the next link. A switch is two links (NPU to
switch, switch to NPU), so crossing it costs two serializations, as in ASTRA-sim. A switch's own
latency is added as the message passes it and each dimension's NIC latency twice on delivery,
as in the congestion-unaware model. There are no packets, buffers or credits: a message is one
unit, links never drop or block, and contention shows only as queueing at links.

Each link keeps the time it becomes free; a message arriving at a link starts at that time or
now, whichever is later, which is the FIFO order of arrival. So a hop costs one scheduled
callback (the arrival at the next node), and a message O(route length) work.

A symmetric collective over every NPU (system.symmetric) runs one representative NPU: every
member's copy of its message takes the image of its route (checked, with every link's figures,
by `uniform_orbit`), so each link behaves as the link from the representative it is an image of
(its `canonical` link), whose queue the representative's messages share as the images share the
real ones; the other links' counters are read from their canonical link's.
"""

from __future__ import annotations

from typing import Hashable

import numpy as np
import simpy

from netsim.api import Network
from netsim.errors import ConfigError
from netsim.topology import Topology
from netsim.topology.base import MessagePaths


class CongestionAwareNetwork(Network):
    """Links as FIFO servers, messages forwarded whole from link to link; see the module docstring."""

    backend_name = "congestion-aware"
    stores_and_forwards = True
    mirrors = "everyone"  # messages meet on links: only a symmetric collective over every NPU is mirrored

    def __init__(self, topology: Topology, env: simpy.Environment | None = None, config=None, seed: int = 0):
        """`config` (a NetworkConfig) names the routing unit whose paths messages take (`MessagePaths`);
        `seed` breaks route ties (`Topology.tie_breaker`)."""
        super().__init__(topology, env)
        self.paths = MessagePaths(topology, seed, getattr(getattr(config, "garnet", None), "routing", "dor"))
        if self.paths.warning:
            self.warnings.append(self.paths.warning)
        self._handed_off = self.env.event()  # every send is handed off at once (as in the analytical backend)
        self._handed_off.succeed()
        links = topology.links
        self._links = {(link.src, link.dst): link.id for link in links}
        self._latency = [link.latency for link in links]
        self._ns_per_byte = [1.0 / link.bandwidth for link in links]
        self.link_bytes = [0] * len(links)
        self.link_busy_ns = [0.0] * len(links)  # transmissions started, whole (link_counters subtracts the future)
        self.free_at = [0.0] * len(links)
        self._routes: dict[tuple[int, int, int], tuple] = {}
        self._canonical: dict[int, int] = {}  # link -> the representative's link whose state stands for it

    @property
    def handed_off(self) -> simpy.Event:
        """The event every send returns (fired already: a message is handed off at once)."""
        return self._handed_off

    def uniform_orbit(self, pairs: list[tuple[int, int]], relabelling) -> "Orbit | None":
        """The (src, dst) pairs one representative message (the first pair) stands for, when each pair's
        route is the image of the first's (`relabelling.image(x, node)`: g_x(node)), through NPUs only,
        with the same figures link by link, and its links map consistently onto links from the
        representative (`relabelling.relative(u, v)`: g_u^-1(v)); else None."""
        topo = self.topology
        rep, first_dst = pairs[0]
        if self.paths.per_message(rep, first_dst):
            return None  # each message would draw its way (or split)
        path = topo.route(rep, first_dst)
        hops, nic = self.route_hops(rep, first_dst)
        figures = [(self._latency[link], self._ns_per_byte[link], extra) for link, extra in hops]
        canonical = {}
        for src, dst in pairs:
            image = [relabelling.image(src, node) for node in path]
            if None in image or topo.route(src, dst) != tuple(image):
                return None
            their_hops, their_nic = self.route_hops(src, dst)
            if their_nic != nic:
                return None
            for (link, extra), expected, u, v in zip(their_hops, figures, image, image[1:]):
                mirror = self._links.get((rep, relabelling.relative(u, v)))
                if (mirror is None or (self._latency[link], self._ns_per_byte[link], extra) != expected
                        or (self._latency[mirror], self._ns_per_byte[mirror]) != expected[:2]
                        or canonical.get(link, mirror) != mirror):
                    return None
                canonical[link] = mirror
        mirrored_hops = tuple((canonical[link], extra) for link, extra in hops)
        return Orbit(len(pairs), tuple(sorted(s for s, _d in pairs)), tuple(sorted(d for _s, d in pairs)),
                     mirrored_hops, nic, canonical)

    def mirror(self, orbits: list["Orbit"]) -> bool:
        """Run the orbits of one collective through their canonical links from now on, if every link maps
        to one canonical link across all of them (and earlier ones); False leaves everything as it was."""
        if not self._canonical and any(self.link_bytes):
            return False  # traffic sent before would be overwritten by the canonical links' counters
        canonical = dict(self._canonical)
        for orbit in orbits:
            for link, mirror in orbit.canonical.items():
                if canonical.setdefault(link, mirror) != mirror:
                    return False
        self._canonical = canonical
        self.stands_for(max(orbit.size for orbit in orbits))
        return True

    def send_mirrored(self, src: int, dst: int, nbytes: int, orbit: "Orbit", arrived, receiver: int) -> None:
        """Send a message of `nbytes` on every pair of `orbit` (src -> dst among them) through the
        representative's links; call `arrived()` when they arrive (all at once: `receiver` is not needed)."""
        self.messages_sent += orbit.size
        self.count_orbit_bytes(orbit.senders, (), nbytes)  # its receivers' bytes count on arrival
        self._forward(_MirroredMessage(src, dst, nbytes, None, orbit.hops, orbit.nic, orbit, arrived))

    def route_hops(self, src: int, dst: int, ties: int = 0) -> tuple:
        """((link id, delay added on reaching its far end: a switch's latency), ...) and the NIC latency
        of the route src -> dst (`ties`: see `Topology.route`)."""
        key = (src, dst, ties)
        route = self._routes.get(key)
        if route is None:
            topo = self.topology
            path = topo.route(src, dst, ties)
            links = [topo.link(u, v) for u, v in zip(path, path[1:])]
            hops = tuple((link.id, topo.switch_latency.get(v, 0.0)) for link, v in zip(links, path[1:]))
            nic = 2 * sum(topo.nic_latency[d] for d in {link.dim for link in links if link.dim >= 0})
            route = self._routes[key] = (hops, nic)
        return route

    def _transmit(self, src: int, dst: int, nbytes: int, tag: Hashable, notify: bool) -> simpy.Event:
        if self._canonical:  # its links stand for others: a message of its own would meet none of theirs
            raise ConfigError(f"NPU {src}: a message to NPU {dst} sent while a symmetric collective runs on the "
                              f"congestion-aware backend; set collective-simulation = \"per-message\" for runs "
                              f"that send messages beside a collective")
        if src == dst:
            self.env.timeout(0).callbacks.append(lambda _event: self.deliver(src, dst, tag, nbytes))
        else:
            shares = self.paths.shares(src, dst, nbytes)
            if len(shares) == 1:
                hops, nic = self.route_hops(src, dst, shares[0][0])
                self._forward(_Message(src, dst, nbytes, tag, hops, nic))
            else:  # an even split over the minimal paths
                left = [len(shares)]
                for ties, share in shares:
                    hops, nic = self.route_hops(src, dst, ties)
                    self._forward(_Part(src, dst, share, tag, hops, nic, nbytes, left))
        return self._handed_off

    def _forward(self, message: "_Message") -> None:
        """Queue `message` on its next link and schedule its arrival at the link's far end."""
        link, extra = message.hops[message.hop]
        now = self.env.now
        serialization = message.nbytes * self._ns_per_byte[link]
        start = self.free_at[link] if self.free_at[link] > now else now
        self.free_at[link] = start + serialization
        self.link_bytes[link] += message.nbytes
        self.link_busy_ns[link] += serialization
        message.hop += 1
        arrival = start + serialization + self._latency[link] + extra
        if message.hop == len(message.hops):
            arrival += message.nic
            self.env.timeout(arrival - now).callbacks.append(message.delivered(self))
        else:
            self.env.timeout(arrival - now).callbacks.append(message.arrived(self))

    def flush_orbits(self) -> None:
        """At the end of a mirrored collective (or before reports): every mirrored link takes its canonical
        link's counters and free time, and links stop being mirrored."""
        super().flush_orbits()
        if self._canonical:
            self.link_bytes, self.link_busy_ns, self.free_at = self._mirrored_counters()
            self._canonical = {}

    def _mirrored_counters(self) -> tuple[list, list, list]:
        """link_bytes, link_busy_ns and free_at, a mirrored link reading its canonical link's."""
        if not self._canonical:
            return self.link_bytes, self.link_busy_ns, self.free_at
        links = np.fromiter(self._canonical.keys(), dtype=np.intp, count=len(self._canonical))
        canonical = np.fromiter(self._canonical.values(), dtype=np.intp, count=len(self._canonical))
        arrays = []
        for values in (self.link_bytes, self.link_busy_ns, self.free_at):
            array = np.array(values)
            array[links] = array[canonical]
            arrays.append(array.tolist())
        return tuple(arrays)

    def link_counters(self) -> tuple[list, list]:
        """Bytes handed to each link, and its busy time up to now (a transmission still under way counts
        only its past part, so utilization never exceeds 1); a link of a mirrored collective reads its
        canonical link's."""
        now = self.env.now
        link_bytes, busy_ns, free_at = self._mirrored_counters()
        busy = [total - (free - now if free > now else 0.0) for total, free in zip(busy_ns, free_at)]
        return list(link_bytes), busy

    def link_columns(self) -> dict[str, list]:
        """The common columns; no flits, buffers or credits in this model (`link_table` makes those NaN)."""
        return self.link_table(*self.link_counters())


class _Message:
    """One message on its way: where it is on its route."""

    __slots__ = ("src", "dst", "nbytes", "tag", "hops", "nic", "hop")

    def __init__(self, src: int, dst: int, nbytes: int, tag: Hashable, hops: tuple, nic: float):
        self.src, self.dst, self.nbytes, self.tag, self.hops, self.nic = src, dst, nbytes, tag, hops, nic
        self.hop = 0

    def arrived(self, network: CongestionAwareNetwork):
        return lambda _event: network._forward(self)

    def delivered(self, network: CongestionAwareNetwork):
        return lambda _event: network.deliver(self.src, self.dst, self.tag, self.nbytes)


class _Part(_Message):
    """One path's share of a message split over several (`MessagePaths`): the message is delivered,
    whole, when the last of its parts arrives (`left`, shared by the parts, counts those on their way)."""

    __slots__ = ("whole", "left")

    def __init__(self, src, dst, nbytes, tag, hops, nic, whole: int, left: list[int]):
        super().__init__(src, dst, nbytes, tag, hops, nic)
        self.whole, self.left = whole, left

    def delivered(self, network: CongestionAwareNetwork):
        def arrive(_event):
            self.left[0] -= 1
            if not self.left[0]:
                network.deliver(self.src, self.dst, self.tag, self.whole)
        return arrive


class _MirroredMessage(_Message):
    """A representative's message that stands for one per pair of its `orbit`: its arrival counts them
    delivered and calls `arrived`."""

    __slots__ = ("orbit", "on_arrival")

    def __init__(self, src, dst, nbytes, tag, hops, nic, orbit: "Orbit", arrived):
        super().__init__(src, dst, nbytes, tag, hops, nic)
        self.orbit, self.on_arrival = orbit, arrived

    def delivered(self, network: CongestionAwareNetwork):
        def arrive(_event):
            network.messages_delivered += self.orbit.size
            network.count_orbit_bytes((), self.orbit.receivers, self.nbytes)
            self.on_arrival()
        return arrive


class Orbit:
    """What one representative message stands for: `size` copies, their senders and receivers, and the
    representative's route with each link replaced by its canonical link (`hops`), NIC latency, and the
    canonical link of every link its copies cross."""

    __slots__ = ("size", "senders", "receivers", "hops", "nic", "canonical")

    def __init__(self, size: int, senders: tuple, receivers: tuple, hops: tuple, nic: float, canonical: dict):
        self.size, self.senders, self.receivers, self.hops, self.nic = size, senders, receivers, hops, nic
        self.canonical = canonical
