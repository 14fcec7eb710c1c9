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

Messages that never interfere let the system layer simulate one NPU of a symmetric collective and
stand it for all (system.symmetric): `uniform_orbit` checks that every member's copy of one of its
messages costs exactly the same, and each of the representative's messages is counted once per
orbit (`send_mirrored`), its bytes reaching the link and NPU counters in bulk (`flush_orbits`).
Orbit traffic is counted in numpy arrays, and numpy is imported by the code that builds and counts
orbits: a run reaches its first event without it (scripts/bench_startup.py), and one with no
symmetric collective never loads it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Hashable

import simpy

from netsim.api import Network
from netsim.topology import Topology
from netsim.topology.base import MessagePaths

if TYPE_CHECKING:
    import numpy as np


class AnalyticalNetwork(Network):
    """Each message is delivered after its closed-form cost; see the module docstring."""

    backend_name = "analytical"
    models_congestion = False
    mirrors = "members"  # system.symmetric may stand one NPU for any symmetric communicator: messages never meet

    def __init__(self, topology: Topology, env: simpy.Environment | None = None, config=None, seed: int = 0):
        """`config` (a NetworkConfig) gives the cross-dimension rule; `seed` breaks route ties
        (`Topology.tie_breaker`), which decide only the links charged."""
        super().__init__(topology, env)
        self.paths = MessagePaths(topology, seed, getattr(getattr(config, "garnet", None), "routing", "dor"))
        if self.paths.warning:
            self.warnings.append(self.paths.warning)
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
        self._crossing_orbits: list[tuple[float, float, int, Orbit]] = []  # the same for mirrored messages
        self._links = {(link.src, link.dst): link for link in topology.links}
        self._pending_orbits: dict[Orbit, int] = {}  # orbit -> bytes of its messages not yet counted (one pair's)
        self._orbit_link_bytes: np.ndarray | None = None  # per link: orbit traffic counted so far
        self._link_bandwidths: np.ndarray | None = None  # per link (with the first orbit traffic)

    @property
    def handed_off(self) -> simpy.Event:
        """The event every send returns (fired already: a message is handed off at once)."""
        return self._handed_off

    def uniform_orbit(self, pairs: list[tuple[int, int]], relabelling=None) -> "Orbit | None":
        """The (src, dst) pairs one representative message stands for, with the links they load, when every
        pair's message costs exactly what the first pair's does (latency and bottleneck bandwidth) and takes
        one route (no tie drawn at random per message, which would charge links message by message); else None.
        (`relabelling`, which the congestion-aware backend needs, is not: messages here never meet.)"""
        import numpy as np  # (here: see the module docstring)

        cost = self.route_cost(*pairs[0])[:2]
        links: dict[int, int] = defaultdict(int)  # link id -> routes of the orbit crossing it
        for src, dst in pairs:
            if self.paths.per_message(src, dst):  # each message draws its way (or splits): per message
                return None
            latency, bandwidth, link_ids = self._cost_of_route(src, dst)
            if (latency, bandwidth) != cost:
                return None
            for link_id in link_ids:
                links[link_id] += 1
        link_ids = np.fromiter(links, dtype=np.intp, count=len(links))
        bandwidths = np.array([self.topology.links[i].bandwidth for i in links])
        return Orbit(pairs, link_ids, np.fromiter(links.values(), dtype=np.int64, count=len(links)), bandwidths)

    def mirror(self, orbits: list["Orbit"]) -> bool:
        """Run these orbits from now on (always possible here: their messages never meet)."""
        self.stands_for(max(len(orbit.pairs) for orbit in orbits))
        return True

    def send_mirrored(self, src: int, dst: int, nbytes: int, orbit: "Orbit", arrived, receiver: int) -> None:
        """Send a message of `nbytes` on every pair of `orbit` (src -> dst among them); call `arrived()`
        when they arrive (all at once: `receiver`, whose copy the packet backend waits for, is not
        needed). Their bytes reach the counters at the next flush."""
        self._pending_orbits[orbit] = self._pending_orbits.get(orbit, 0) + nbytes
        self.messages_sent += len(orbit.pairs)
        latency, bandwidth, _ = self.route_cost(src, dst)
        now, serialization = self.env.now, nbytes / bandwidth
        if now + serialization > self.next_counter_read:
            self._crossing_orbits.append((now, now + serialization, nbytes, orbit))
        self.env.timeout(latency + serialization).callbacks.append(
            lambda _event: self._mirrored(orbit, nbytes, arrived))

    def _mirrored(self, orbit: "Orbit", nbytes: int, arrived) -> None:
        self.messages_delivered += len(orbit.pairs)
        self.count_orbit_bytes((), orbit.receivers, nbytes)  # received on arrival, as a message's own bytes
        arrived()

    def _accumulate_orbits(self) -> None:
        """Add the orbits' messages counted so far to the per-link bytes of orbit traffic (numpy, cheap to
        read while running) and to the bulk count of bytes sent per NPU (received ones count on arrival:
        `_mirrored`). Whole bytes only: their sums are exact, so the counters do not depend on when
        they are read (a live view reads them at moments of wall time)."""
        if self._pending_orbits and self._orbit_link_bytes is None:
            import numpy as np  # (an orbit exists: imported already)

            self._orbit_link_bytes = np.zeros(len(self.link_bytes), dtype=np.int64)
            if self._link_bandwidths is None:
                self._link_bandwidths = np.array([link.bandwidth for link in self.topology.links])
        for orbit, nbytes in self._pending_orbits.items():
            self._orbit_link_bytes[orbit.link_ids] += orbit.routes * nbytes
            self.count_orbit_bytes(orbit.senders, (), nbytes)
        self._pending_orbits.clear()

    def _flush_npu_bytes(self) -> None:
        self._accumulate_orbits()  # the bytes the orbits' senders have sent so far, too
        super()._flush_npu_bytes()

    def flush_orbits(self) -> None:
        """Bring `link_bytes`, `link_busy_ns` and the per-NPU counters up to date with the orbits' traffic
        (at the end of a symmetric collective, and before reports)."""
        super().flush_orbits()
        if self._orbit_link_bytes is not None:
            link_bytes, busy = self._merged_link_counters()
            self.link_bytes, self.link_busy_ns = link_bytes.tolist(), busy.tolist()
            self._orbit_link_bytes = None

    def _merged_link_counters(self) -> tuple:
        """Fresh copies of the per-link (bytes, busy ns) totals: lists, or numpy arrays while orbit traffic
        is counted (a sample of thousands of links then never goes through Python lists). Orbit traffic
        keeps a link busy for its bytes over the link's bandwidth, which may differ from adding each
        message's share in turn (as per-message traffic does) by float rounding (relative 1e-15)."""
        if self._orbit_link_bytes is None:
            return list(self.link_bytes), list(self.link_busy_ns)
        import numpy as np  # (orbit traffic is counted: imported already)

        orbit_busy = self._orbit_link_bytes / self._link_bandwidths
        if not any(self.link_bytes):  # no message went per message: orbit traffic only
            return self._orbit_link_bytes.copy(), orbit_busy
        return (np.asarray(self.link_bytes, dtype=np.int64) + self._orbit_link_bytes,
                np.asarray(self.link_busy_ns) + orbit_busy)

    def route_cost(self, src: int, dst: int, ties: int = 0) -> tuple[float, float, tuple[int, ...]]:
        """(fixed latency ns, bottleneck bandwidth GB/s, link ids) of the route src -> dst (`ties`:
        see `Topology.route`; the cost is the same either way)."""
        key = (src, dst, ties)
        cost = self._route_costs.get(key)
        if cost is None:
            cost = self._route_costs[key] = self._cost_of_route(src, dst, ties)
        return cost

    def _cost_of_route(self, src: int, dst: int, ties: int = 0) -> tuple[float, float, tuple[int, ...]]:
        topo = self.topology
        path = topo.route(src, self._charged_destination(src, dst), ties)
        links = [self._links[u, v] for u, v in zip(path, path[1:])]
        latency = sum(link.latency for link in links)
        latency += sum(topo.switch_latency.get(node, 0.0) for node in path[1:-1])
        latency += 2 * sum(topo.nic_latency[d] for d in {link.dim for link in links if link.dim >= 0})
        bandwidth = min(link.bandwidth for link in links)
        return latency, bandwidth, tuple(link.id for link in links)

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

    def _transmit(self, src: int, dst: int, nbytes: int, tag: Hashable, notify: bool) -> simpy.Event:
        delay = 0.0
        if src != dst:
            for ties, share in self.paths.shares(src, dst, nbytes):  # one route, or an even split
                latency, bandwidth, link_ids = self.route_cost(src, dst, ties)
                serialization = nbytes / bandwidth
                delay = latency + serialization
                for link_id in link_ids:
                    self.link_bytes[link_id] += share
                    self.link_busy_ns[link_id] += share / self.topology.links[link_id].bandwidth
                now = self.env.now
                if now + serialization > self.next_counter_read:
                    self._crossing.append((now, now + serialization, share, link_ids))
        self.env.timeout(delay).callbacks.append(lambda _event: self.deliver(src, dst, tag, nbytes))
        return self._handed_off

    def link_columns(self) -> dict[str, list]:
        """The common columns; no flits, buffers or credits in this model (`link_table` makes those NaN)."""
        self.flush_orbits()
        return self.link_table(self.link_bytes, self.link_busy_ns)

    def link_counters(self) -> tuple:
        """Bytes and busy time per link up to now: the totals less what messages still crossing
        have yet to serialize (see the module docstring). Lists, or numpy arrays while orbit traffic
        is counted or crossing (the same values either way)."""
        now = self.env.now
        self._crossing = [entry for entry in self._crossing if entry[1] > now]  # those still crossing
        self._crossing_orbits = [entry for entry in self._crossing_orbits if entry[1] > now]
        self._accumulate_orbits()
        link_bytes, busy = self._merged_link_counters()
        if self._crossing_orbits or (self._crossing and not isinstance(link_bytes, list)):  # numpy arrays
            import numpy as np  # (orbit traffic is counted: imported already)

            link_bytes, busy = np.array(link_bytes, dtype=float), np.array(busy, dtype=float)  # bytes go fractional
        links = self.topology.links
        for start, end, nbytes, link_ids in self._crossing:
            left = nbytes * (end - max(now, start)) / (end - start)
            for link_id in link_ids:
                link_bytes[link_id] -= left
                busy[link_id] -= left / links[link_id].bandwidth
        for start, end, nbytes, orbit in self._crossing_orbits:
            left = nbytes * (end - max(now, start)) / (end - start)
            link_bytes[orbit.link_ids] -= left * orbit.routes
            busy[orbit.link_ids] -= left * orbit.routes / orbit.bandwidths
        return link_bytes, busy


class Orbit:
    """Pairs (src, dst) that send alike in a symmetric collective: the links their routes cross (ids, how
    many of the routes cross each, bandwidths), and the senders and receivers, which are the same NPUs
    (each once) for all orbits of one collective."""

    __slots__ = ("pairs", "link_ids", "routes", "bandwidths", "senders", "receivers")

    def __init__(self, pairs: list[tuple[int, int]], link_ids: np.ndarray, routes: np.ndarray, bandwidths: np.ndarray):
        self.pairs = pairs
        self.link_ids, self.routes, self.bandwidths = link_ids, routes, bandwidths
        self.senders = tuple(sorted(src for src, _dst in pairs))
        self.receivers = tuple(sorted(dst for _src, dst in pairs))
