"""NetworkAPI: the one contract between the system layer and any network backend.

One `Endpoint` per NPU, as in ASTRA-sim. `send` and `recv` return simpy Events so the system and
workload layers read as simpy processes (`yield endpoint.recv(...)`), while a backend delivers
messages through plain callbacks. Sends and receives match like MPI point-to-point on
(src, dst, tag), in order among equal keys; a message that arrives before its recv is posted waits
in the unexpected-message table, and the recv's event fires at max(arrival, post time).

A backend subclasses `Network` and implements `_transmit`: carry `nbytes` from src to dst and
call `self.deliver(src, dst, tag, nbytes)` when the last byte has arrived.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import defaultdict, deque
from typing import TYPE_CHECKING, Callable, Hashable, Protocol

import simpy
from simpy.core import EmptySchedule
from simpy.events import Event

from netsim.collector import rare_garbage_collection
from netsim.topology import Topology

if TYPE_CHECKING:
    import pandas as pd


# The contract of links.csv: every backend writes at least these columns (one row per directed link, in
# link-id order); a column a backend does not model is NaN (`Network.link_table`).
LINK_COLUMNS = {
    "link_id": "index of the directed link in the topology",
    "src": "node the link leaves (NPU ids first, then switches)",
    "dst": "node the link enters",
    "kind": "npu-npu, npu-switch, switch-npu, switch-switch, ...",
    "dim": "topology dimension (level) of the link; -1 for links outside any dimension",
    "bandwidth_GBps": "link bandwidth (GB/s = bytes/ns)",
    "latency_ns": "link latency",
    "bytes": "payload bytes that crossed the link",
    "flits": "flits that crossed the link (packet backend; NaN in the analytical model)",
    "busy_time_ns": "time the link spent serializing data",
    "utilization": "busy_time_ns / simulated time (analytical: may exceed 1, what congestion would cost)",
    "mean_buffer_flits": "mean flits held in the receiving input port (all VCs; NaN analytical)",
    "max_vc_flits": "peak flits held in one VC of the receiving input port (NaN analytical)",
    "credit_stall_time_ns": "time flits waited at the link's output for a credit (NaN analytical)",
}


class Monitor(Protocol):
    """Watches a run from outside (netsim.app.progress): called every `stride` events by Network.run."""

    stride: int

    def check(self, network: "Network") -> bool:
        """Look at the network between two events; True stops the run."""


class NetworkAPI(Protocol):
    """What the system layer may use of a backend, per NPU."""

    npu: int

    def now(self) -> float:
        """Simulated time in ns."""

    def schedule(self, delay_ns: float, fn: Callable[[], None]) -> None:
        """Call `fn()` after `delay_ns`."""

    def send(self, dst: int, nbytes: int, tag: Hashable) -> simpy.Event:
        """Start sending; the event fires when the message has been handed to the network."""

    def post(self, dst: int, nbytes: int, tag: Hashable) -> None:
        """`send` for a sender that never waits for the hand-off: no event (the packet backend then
        need not tell when the message has left, a simpy event and a NIC step per message less)."""

    def recv(self, src: int, nbytes: int, tag: Hashable) -> simpy.Event:
        """Expect a message; the event fires when all of it has arrived (and the recv is posted)."""


class Endpoint:
    """An NPU's view of the network: the NetworkAPI implementation every backend shares."""

    __slots__ = ("network", "npu", "env", "_npus", "_arrived", "_posted")

    def __init__(self, network: "Network", npu: int):
        self.network = network
        self.npu = npu
        self.env = network.env
        self._npus = network.topology.npus
        self._arrived: dict[tuple, deque] = defaultdict(deque)  # (src, tag) -> [nbytes] not yet received
        self._posted: dict[tuple, deque] = defaultdict(deque)  # (src, tag) -> [(event, nbytes)] waiting

    def now(self) -> float:
        return self.env.now

    def schedule(self, delay_ns: float, fn: Callable[[], None]) -> None:
        self.env.timeout(delay_ns).callbacks.append(lambda _event: fn())

    def send(self, dst: int, nbytes: int, tag: Hashable) -> simpy.Event:
        return self._submit(dst, nbytes, tag, True)

    def post(self, dst: int, nbytes: int, tag: Hashable) -> None:
        self._submit(dst, nbytes, tag, False)

    def _submit(self, dst: int, nbytes: int, tag: Hashable, notify: bool) -> simpy.Event | None:
        if type(nbytes) is not int or nbytes <= 0 or not 0 <= dst < self._npus:
            nbytes = self._checked_bytes(dst, nbytes)
        return self.network.submit(self.npu, dst, nbytes, tag, notify)

    def _checked_bytes(self, dst: int, nbytes) -> int:
        """`nbytes` as an int, or a one-line ValueError if `send` cannot send it to `dst` (the checks of a
        send that is not plainly valid)."""
        if not 0 <= dst < self._npus:
            raise ValueError(f"NPU {self.npu}: send to NPU {dst}, which does not exist")
        if nbytes <= 0:
            raise ValueError(f"NPU {self.npu}: send of {nbytes} bytes to NPU {dst}; messages carry at least 1 byte")
        # a float or numpy number: whole bytes only, as every backend counts them (nor inf or nan)
        if not float(nbytes).is_integer():
            raise ValueError(f"NPU {self.npu}: send of {nbytes} bytes to NPU {dst}; messages carry whole bytes")
        return int(nbytes)

    def recv(self, src: int, nbytes: int, tag: Hashable) -> simpy.Event:
        event = Event(self.env)
        key = (src, tag)
        arrived = self._arrived.get(key)
        if arrived:
            if arrived[0] != nbytes:
                raise _size_error(self.npu, src, tag, arrived[0], nbytes)
            arrived.popleft()
            if not arrived:
                del self._arrived[key]
            event.succeed()
        else:
            self._posted[key].append((event, nbytes))
        return event

    def deliver(self, src: int, tag: Hashable, nbytes: int) -> None:
        """Called by the backend when the whole message from `src` has arrived."""
        key = (src, tag)
        posted = self._posted.get(key)
        if posted:
            event, expected = posted.popleft()
            if not posted:
                del self._posted[key]
            if nbytes != expected:
                raise _size_error(self.npu, src, tag, nbytes, expected)
            event.succeed()
        else:
            self._arrived[key].append(nbytes)

    def waiting(self) -> list[str]:
        """Receives posted here that no message has matched yet (for hang reports)."""
        return [f"NPU {self.npu} waits for {nbytes} B from NPU {src} (tag {tag})"
                for (src, tag), queue in self._posted.items() for _event, nbytes in queue]


def _size_error(npu: int, src: int, tag: Hashable, sent: int, expected: int) -> ValueError:
    """The error of a message whose size is not the one its recv expects."""
    return ValueError(f"NPU {npu}: message from NPU {src} with tag {tag} has {sent} B, recv expected {expected} B")


class Network(ABC):
    """A backend: builds the endpoints, carries messages, runs the clock, reports statistics."""

    backend_name = "abstract"
    models_congestion = True  # False: messages share a link without waiting (utilization may exceed 1)
    stores_and_forwards = False  # True: a message crosses a switch whole, serialized into it and out again
    # True: link_counters() are exact at any simulated time, so a link sample may be taken before the
    # next event passes its boundary (else only at or past it: next_counter_read is a promise then)
    counters_any_time = False
    # Which symmetric collectives system.symmetric may run as one representative NPU on this backend:
    # None (none), "members" (any communicator), "everyone" (one spanning every NPU), "copies" (any
    # communicator, every member's copy of a message sent and the copies' arrivals compared; also
    # system.lockstep's runs). Such a backend has `uniform_orbit`, `mirror`, `send_mirrored` and
    # `handed_off`.
    mirrors: str | None = None

    def __init__(self, topology: Topology, env: simpy.Environment | None = None):
        self.topology = topology
        self.env = env if env is not None else simpy.Environment()
        self._endpoints = [Endpoint(self, npu) for npu in range(topology.npus)]
        self._bytes_sent = [0] * topology.npus  # read as bytes_sent (which adds the bulk-counted traffic first)
        self._bytes_received = [0] * topology.npus
        self.messages_sent = 0
        self.messages_delivered = 0
        self.events = 0  # simulation events processed by run()
        self.started = False  # run() has been called (the system layer plans some collectives only before)
        self._monitor_stride: int | None = None  # events between monitor checks while running (None: no monitor)
        self._check_every: float = float("inf")
        self._standing = 1  # NPUs one event may stand for (stands_for)
        # simulated time at or after which link_counters() is next read (a sampler sets it): a backend
        # may skip bookkeeping for what is done by then; the live view's reads in between are approximate
        self.next_counter_read = math.inf
        self.warnings: list[str] = []  # one line each, on what the run went through (summary.json)
        self._orbit_bytes: dict[tuple, int] = {}  # (senders, receivers) -> bytes each, not yet in the NPU counters

    def endpoint(self, npu: int) -> Endpoint:
        return self._endpoints[npu]

    def submit(self, src: int, dst: int, nbytes: int, tag: Hashable, notify: bool) -> simpy.Event | None:
        """Count the message and hand it to the backend; returns the send's event (`notify`, else
        a backend may return None: `Endpoint.post`)."""
        self._bytes_sent[src] += nbytes
        self.messages_sent += 1
        return self._transmit(src, dst, nbytes, tag, notify)

    def deliver(self, src: int, dst: int, tag: Hashable, nbytes: int) -> None:
        """Backends call this when a message's last byte has reached `dst`."""
        self._bytes_received[dst] += nbytes
        self.messages_delivered += 1
        self._endpoints[dst].deliver(src, tag, nbytes)

    @abstractmethod
    def _transmit(self, src: int, dst: int, nbytes: int, tag: Hashable, notify: bool) -> simpy.Event | None:
        """Carry the message; call `deliver` on arrival; return the event that fires on hand-off
        (None may be returned when not `notify`)."""

    def run(self, until: float | None = None, monitor: "Monitor | None" = None) -> bool:
        """Advance simulated time until no events remain (or past `until` ns), counting events.

        With a `monitor`, `monitor.check(self)` is called every `monitor.stride` events (progress,
        link sampling, Ctrl-C); when it returns True the run stops where it is. Returns True when
        the run was stopped that way (the state is then a consistent between-events snapshot).
        """
        self.started = True
        with rare_garbage_collection():
            return self._run_events(until, monitor)

    def stands_for(self, npus: int) -> None:
        """From now on an event may stand for `npus` NPUs' events (system.symmetric and system.lockstep run
        one NPU for many): the monitor is checked that much more often, so progress and link samples keep
        their cadence (in this run() call and later ones)."""
        self._standing = max(self._standing, npus)
        if self._monitor_stride is not None:
            self._check_every = max(1, self._monitor_stride // self._standing)

    def _run_events(self, until: float | None, monitor: "Monitor | None") -> bool:
        limit = math.inf if until is None else until
        self._monitor_stride = monitor.stride if monitor is not None else None
        if monitor is None:
            self._check_every = math.inf
            self._run_unmonitored(limit)
            return False
        self._check_every = max(1, monitor.stride // self._standing)
        peek, step = self.env.peek, self.env.step
        count = 0
        stopped = False
        while True:
            next_time = peek()  # infinite once nothing is scheduled
            if next_time == math.inf or next_time > limit:
                break
            if next_time > self.next_counter_read and self.counters_any_time:
                # a link sample is due before this event: the monitor takes it now, so a backend with few
                # simpy events (the packet clock runs cycles between them) keeps the sampling cadence
                due = self.next_counter_read
                self.events += count
                count = 0
                if monitor.check(self):
                    stopped = True
                    break
                if self.next_counter_read == due:  # this monitor samples nothing: ask no more
                    self.next_counter_read = math.inf
                continue
            step()
            count += 1
            if count >= self._check_every:
                self.events += count
                count = 0
                if monitor.check(self):
                    stopped = True
                    break
        self.events += count
        return stopped

    def _run_unmonitored(self, limit: float) -> None:
        """`_run_events` without a monitor: step and count events up to `limit`, nothing else per event
        (a 1024-NPU collective runs 1.5 million of them); without a limit, until simpy has none left."""
        peek, step = self.env.peek, self.env.step
        count = 0
        if limit == math.inf:
            try:
                while True:
                    step()
                    count += 1
            except EmptySchedule:
                pass
        else:
            while peek() <= limit:
                step()
                count += 1
        self.events += count

    @abstractmethod
    def link_counters(self) -> tuple:
        """Cumulative (bytes, busy_time_ns) per link, in link-id order, for sampling during a run:
        a cheap read of the backend's counters (two lists, Python arrays or numpy arrays, fresh copies)."""

    def waiting(self) -> list[str]:
        """Every posted receive that has not been matched: non-empty after a run means a hang."""
        return [line for endpoint in self._endpoints for line in endpoint.waiting()]

    def in_flight(self) -> int:
        return self.messages_sent - self.messages_delivered

    def events_so_far(self) -> int:
        """Simulation events run so far, as the run summary counts them (progress display)."""
        return self.events

    def count_orbit_bytes(self, senders: tuple, receivers: tuple, nbytes: int) -> None:
        """`nbytes` sent by each of `senders` and received by each of `receivers` (system.symmetric's
        messages that stand for one per member), added to the NPU counters in bulk when they are read."""
        key = (senders, receivers)
        self._orbit_bytes[key] = self._orbit_bytes.get(key, 0) + nbytes

    @property
    def bytes_sent(self) -> list[int]:
        """Bytes each NPU has sent so far (NPU id order)."""
        self._flush_npu_bytes()
        return self._bytes_sent

    @property
    def bytes_received(self) -> list[int]:
        """Bytes each NPU has received so far (NPU id order)."""
        self._flush_npu_bytes()
        return self._bytes_received

    def flush_orbits(self) -> None:
        """Bring the counters up to date with the traffic counted in bulk (`count_orbit_bytes`)."""
        self._flush_npu_bytes()

    def _flush_npu_bytes(self) -> None:
        """Add the bytes counted in bulk to the per-NPU counters (on reading them: a sample of the link
        counters does not pay for it)."""
        for (senders, receivers), nbytes in self._orbit_bytes.items():
            for npu in senders:
                self._bytes_sent[npu] += nbytes
            for npu in receivers:
                self._bytes_received[npu] += nbytes
        self._orbit_bytes.clear()

    def npu_stats(self) -> pd.DataFrame:
        import pandas as pd

        self.flush_orbits()
        return pd.DataFrame({"npu": range(self.topology.npus), "bytes_sent": self.bytes_sent,
                             "bytes_received": self.bytes_received})

    @abstractmethod
    def link_columns(self) -> dict[str, list]:
        """One list per column, one row per directed link in link-id order, with at least the columns
        of `LINK_COLUMNS` (`link_table` fills those a backend does not model with NaN):
        `link_stats`'s table, without pandas."""

    def link_stats(self) -> pd.DataFrame:
        """The per-link table (`link_columns`) as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.link_columns())

    def stats(self) -> dict[str, pd.DataFrame]:
        """DataFrames of the run so far: `links` (per link) and `npus` (per NPU)."""
        return {"links": self.link_stats(), "npus": self.npu_stats()}

    def link_table(self, link_bytes, busy_ns, extra: dict | None = None) -> dict[str, list]:
        """The common per-link columns from per-link byte and busy-time counters (indexed by link id)."""
        elapsed = self.env.now
        links = self.topology.links
        busy_ns = list(busy_ns)
        table = {
            "link_id": [link.id for link in links],
            "src": [link.src for link in links],
            "dst": [link.dst for link in links],
            "kind": [link.kind for link in links],
            "dim": [link.dim for link in links],
            "bandwidth_GBps": [link.bandwidth for link in links],
            "latency_ns": [link.latency for link in links],
            "bytes": list(link_bytes),
            "busy_time_ns": busy_ns,
            "utilization": [busy / elapsed for busy in busy_ns] if elapsed > 0 else [0.0] * len(links),
        }
        table.update((column, list(values)) for column, values in (extra or {}).items())
        for column in LINK_COLUMNS:  # what this backend does not model
            table.setdefault(column, [math.nan] * len(links))
        return table
