"""Congestion-unaware analytical backend, with ASTRA-sim's cost model.

A message of n bytes from src to dst costs

    sum of link latencies on its route + n / (slowest link bandwidth on the route)
    + switch latencies crossed + 2 x NIC latency of each dimension crossed

and is delivered after exactly that long. Messages never interfere: a link carries any number at
once. On ASTRA-sim's own network files a message between NPUs that differ in several dimensions
is costed as ASTRA-sim's analytical backends cost it: as if it crossed only the highest (v1's JSON)
or the lowest (2.x's YAML) of those dimensions (`cross_dimension_messages`; `route`, every link of
the route, elsewhere). So a ring or fully-connected neighbour is 1 hop of latency and one serialization, a switch
2 hops and one serialization, as in ASTRA-sim. Per-link bytes and busy time are still counted, so
`links.csv` shows where traffic went (utilization above 1 is what congestion would have cost).
A link's bytes and busy time are counted when a message is sent, whole; the counters sampled
during a run (`link_counters`, link_timeseries.csv) leave out the part of each message not yet
serialized, taking a message to cross its route's links evenly over its serialization time, so a
sampling interval is charged only what crossed in it.
"""

from __future__ import annotations

from typing import Hashable

import simpy

from netsim.api import Network
from netsim.topology import Topology


class AnalyticalNetwork(Network):
    """Each message is delivered after its closed-form cost; see the module docstring."""

    backend_name = "analytical"
    models_congestion = False

    def __init__(self, topology: Topology, env: simpy.Environment | None = None, config=None, seed: int = 0):
        """`config` (a NetworkConfig) gives the cross-dimension rule; `seed` breaks route ties
        (`Topology.tie_breaker`), which decide only the links charged."""
        super().__init__(topology, env)
        self.ties = topology.tie_breaker(seed).ties
        self.cross_dimension = config.cross_dimension_messages if config is not None else "route"
        # A message is handed off at once: every send returns this one event, triggered now, which
        # saves an event per message (yielding it later resumes at once, as for any fired event).
        self._handed_off = self.env.event()
        self._handed_off.succeed()
        self.link_bytes = [0] * len(topology.links)
        self.link_busy_ns = [0.0] * len(topology.links)
        self._route_costs: dict[tuple[int, int, int], tuple[float, float, tuple[int, ...]]] = {}
        # (start, end of serialization, bytes, link ids) of messages still crossing at the next read
        # of the counters (Network.next_counter_read): the only ones whose share must be left out
        self._crossing: list[tuple[float, float, int, tuple[int, ...]]] = []

    def route_cost(self, src: int, dst: int, ties: int = 0) -> tuple[float, float, tuple[int, ...]]:
        """(fixed latency ns, bottleneck bandwidth GB/s, link ids) of the route src -> dst (`ties`:
        see `Topology.route`; the cost is the same either way)."""
        key = (src, dst, ties)
        cost = self._route_costs.get(key)
        if cost is None:
            topo = self.topology
            path = topo.route(src, self._charged_destination(src, dst), ties)
            links = [topo.link(u, v) for u, v in zip(path, path[1:])]
            latency = sum(link.latency for link in links)
            latency += sum(topo.switch_latency.get(node, 0.0) for node in path[1:-1])
            latency += 2 * sum(topo.nic_latency[d] for d in {link.dim for link in links if link.dim >= 0})
            bandwidth = min(link.bandwidth for link in links)
            cost = (latency, bandwidth, tuple(link.id for link in links))
            self._route_costs[key] = cost
        return cost

    def _charged_destination(self, src: int, dst: int) -> int:
        """Where the cost model takes a message to go: `dst`, or under an ASTRA-sim rule the NPU that
        differs from `src` only in the one dimension it charges."""
        if self.cross_dimension == "route":
            return dst
        topo = self.topology
        here, there = topo.coords(src), topo.coords(dst)
        crossed = [d for d, (a, b) in enumerate(zip(here, there)) if a != b]
        if len(crossed) < 2:
            return dst
        d = crossed[-1] if self.cross_dimension == "highest-dimension" else crossed[0]
        return topo.npu_at(here[:d] + (there[d],) + here[d + 1:])

    def message_time(self, src: int, dst: int, nbytes: int) -> float:
        """The closed-form delivery time of one message, in ns (0 to oneself)."""
        if src == dst:
            return 0.0
        latency, bandwidth, _ = self.route_cost(src, dst)
        return latency + nbytes / bandwidth

    def _transmit(self, src: int, dst: int, nbytes: int, tag: Hashable) -> simpy.Event:
        delay = 0.0
        if src != dst:
            latency, bandwidth, link_ids = self.route_cost(src, dst, self.ties(src, dst))
            serialization = nbytes / bandwidth
            delay = latency + serialization
            for link_id in link_ids:
                self.link_bytes[link_id] += nbytes
                self.link_busy_ns[link_id] += nbytes / self.topology.links[link_id].bandwidth
            now = self.env.now
            if now + serialization > self.next_counter_read:
                self._crossing.append((now, now + serialization, nbytes, link_ids))
        self.env.timeout(delay).callbacks.append(lambda _event: self.deliver(src, dst, tag, nbytes))
        return self._handed_off

    def link_stats(self):
        """The common columns; no flits, buffers or credits in this model (`link_frame` makes those NaN)."""
        return self.link_frame(self.link_bytes, self.link_busy_ns)

    def link_counters(self) -> tuple[list, list]:
        """Bytes and busy time per link up to now: the totals less what messages still crossing
        have yet to serialize (see the module docstring)."""
        now = self.env.now
        self._crossing = [entry for entry in self._crossing if entry[1] > now]  # those still crossing
        link_bytes, busy = list(self.link_bytes), list(self.link_busy_ns)
        links = self.topology.links
        for start, end, nbytes, link_ids in self._crossing:
            left = nbytes * (end - max(now, start)) / (end - start)
            for link_id in link_ids:
                link_bytes[link_id] -= left
                busy[link_id] -= left / links[link_id].bandwidth
        return link_bytes, busy
