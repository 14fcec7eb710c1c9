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
"""

from __future__ import annotations

from typing import Hashable

import simpy

from netsim.api import Network
from netsim.topology import Topology


class CongestionAwareNetwork(Network):
    """Links as FIFO servers, messages forwarded whole from link to link; see the module docstring."""

    backend_name = "congestion-aware"

    def __init__(self, topology: Topology, env: simpy.Environment | None = None, config=None, seed: int = 0):
        """`config` is accepted like every backend's; `seed` breaks route ties (`Topology.tie_breaker`)."""
        super().__init__(topology, env)
        self.ties = topology.tie_breaker(seed).ties
        self._handed_off = self.env.event()  # every send is handed off at once (as in the analytical backend)
        self._handed_off.succeed()
        links = topology.links
        self._latency = [link.latency for link in links]
        self._ns_per_byte = [1.0 / link.bandwidth for link in links]
        self.link_bytes = [0] * len(links)
        self.link_busy_ns = [0.0] * len(links)  # transmissions started, whole (link_counters subtracts the future)
        self.free_at = [0.0] * len(links)
        self._routes: dict[tuple[int, int, int], tuple] = {}

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

    def _transmit(self, src: int, dst: int, nbytes: int, tag: Hashable) -> simpy.Event:
        if src == dst:
            self.env.timeout(0).callbacks.append(lambda _event: self.deliver(src, dst, tag, nbytes))
        else:
            hops, nic = self.route_hops(src, dst, self.ties(src, dst))
            self._forward(_Message(src, dst, nbytes, tag, hops, nic))
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

    def link_counters(self) -> tuple[list, list]:
        """Bytes handed to each link, and its busy time up to now (a transmission still under way counts
        only its past part, so utilization never exceeds 1)."""
        now = self.env.now
        busy = [total - (free - now if free > now else 0.0) for total, free in zip(self.link_busy_ns, self.free_at)]
        return list(self.link_bytes), busy

    def link_stats(self):
        """The common columns; no flits, buffers or credits in this model (`link_frame` makes those NaN)."""
        return self.link_frame(*self.link_counters())


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
