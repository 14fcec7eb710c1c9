"""What an algorithm sees of one phase on one NPU, and the message primitives it is written in.

An algorithm speaks in *parts*: the phase's data is split into `size` parts (part i is the share
of rank i), and every message carries a contiguous range of parts `(first, stop)`. The wire size
of a message is `parts * unit`, where `unit` is ceil(nbytes / p) for reductions and all-to-all
(messages are padded to equal slices, as in ASTRA-sim) and the whole per-NPU shard for gathers.
In functional mode `data` is set and the same calls also move and reduce real numpy slices;
in timing mode `data` is None and the calls cost nothing beyond the network messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Hashable

import simpy

from netsim.api import NetworkAPI

GATHERING_OPS = ("all-gather", "gather")  # ops whose nbytes is one rank's shard, not the whole input


def split_bytes(nbytes: int, parts: int) -> int:
    """Bytes in one of `parts` equal slices (rounded up so no byte is lost; at least 1)."""
    return max(1, math.ceil(nbytes / parts))


class LocalReduction:
    """One NPU's local memory reducing received messages: 3 accesses per byte (two reads, one
    write) at local-mem-bw, as ASTRA-sim charges them.

    ASTRA-sim gives each received message its own reduction, so messages that arrive together
    reduce in parallel (`serial=False`, the default accounting); under `collective-accounting =
    "physical"` one NPU's memory reduces one message at a time, in arrival order (`serial=True`).
    """

    def __init__(self, ns_per_byte: float, serial: bool):
        self.ns_per_byte = ns_per_byte
        self.serial = serial
        self.free_at = 0.0  # serial: when the memory finishes the reductions queued so far

    def done_at(self, start: float, nbytes: int) -> float:
        """When a reduction of `nbytes` that may begin at `start` ends."""
        if self.serial:
            start = max(start, self.free_at)
            self.free_at = start + self.ns_per_byte * nbytes
            return self.free_at
        return start + self.ns_per_byte * nbytes


def unit_bytes(op: str, nbytes: int, size: int) -> int:
    """Wire bytes of one part of a phase of `op` on `nbytes` over `size` ranks (`PhaseContext.unit`)."""
    return nbytes if op in GATHERING_OPS else split_bytes(nbytes, size)


@dataclass(frozen=True)
class PhaseContext:
    """Everything an algorithm needs for one phase on one NPU."""

    endpoint: NetworkAPI
    group: tuple  # NPU ids of this phase's group, in rank order
    rank: int  # this NPU's index in group
    op: str  # all-reduce | reduce-scatter | all-gather | all-to-all | broadcast | reduce | gather | scatter | barrier
    nbytes: int  # per-NPU data the phase starts with (gathers: one rank's shard)
    tag: Hashable  # unique per (collective, chunk, phase); steps extend it
    endpoint_delay: float
    reduction: LocalReduction  # this NPU's local memory, which reduces received messages
    astra_accounting: bool = True  # collective-accounting = "astra-sim": charge as ASTRA-sim 2.x does
    window: int = 0  # direct algorithms: messages in flight at once (0 = all)
    variant: int = 0  # double-binary-tree: which of the two trees (alternates per tree phase on an NPU)
    data: Any = None  # functional mode: the phase's payload (system.functional), else None

    @property
    def size(self) -> int:
        return len(self.group)

    @cached_property
    def env(self) -> simpy.Environment:
        return self.endpoint.env

    @cached_property
    def unit(self) -> int:
        """Wire bytes of one part."""
        return unit_bytes(self.op, self.nbytes, self.size)

    def wire_bytes(self, parts: tuple | None) -> int:
        """Bytes of a message carrying `parts` (1 for a data-less message)."""
        return (parts[1] - parts[0]) * self.unit if parts else 1

    def send(self, to: int, parts: tuple | None, key: Hashable, nbytes: int | None = None) -> None:
        """Send `parts` (a (first, stop) range, or None for a data-less message) to rank `to`."""
        self.endpoint.post(self.group[to], self.wire_bytes(parts) if nbytes is None else nbytes, (self.tag, key))
        if self.data is not None and parts is not None:
            self.data.post(self.group[to], (self.tag, key), parts)

    def recv(self, frm: int, parts: tuple | None, key: Hashable, nbytes: int | None = None) -> simpy.Event:
        """The event of receiving what rank `frm` sent with the same `key` (sizes as in `send`)."""
        return self.endpoint.recv(self.group[frm], self.wire_bytes(parts) if nbytes is None else nbytes,
                                  (self.tag, key))

    def land(self, frm: int, parts: tuple, key: Hashable, reduce: bool) -> None:
        """Apply a received message's payload (add it in when `reduce`, else copy it); functional mode only."""
        if self.data is not None and parts is not None:
            self.data.land(self.group[frm], (self.tag, key), parts, reduce)

    def forward(self, frm: int, in_key: Hashable, to: int, out_key: Hashable, nbytes: int) -> None:
        """Send on, unchanged, what rank `frm` sent with `in_key` (received already) to rank `to`."""
        self.endpoint.post(self.group[to], nbytes, (self.tag, out_key))
        if self.data is not None:
            self.data.relay(self.group[frm], (self.tag, in_key), self.group[to], (self.tag, out_key))

    def handled_at(self, reduced_bytes: int = 0) -> float:
        """When a message received now is handled: one endpoint delay, then the reduction of
        `reduced_bytes` in this NPU's local memory (0: nothing to reduce)."""
        ready = self.env.now + self.endpoint_delay
        return self.reduction.done_at(ready, reduced_bytes) if reduced_bytes else ready

    def handled(self, reduced_bytes: int = 0) -> simpy.Event:
        """A timeout that fires at `handled_at(reduced_bytes)`."""
        env = self.env
        return env.timeout(self.handled_at(reduced_bytes) - env.now)

    def exchange(self, to: int, frm: int, send_parts, recv_parts, key: Hashable, reduce: bool,
                 nbytes: int | None = None, charged: int | None = None):
        """One step: send to `to`, wait for `frm`'s message, apply it, then pay one endpoint delay and
        the reduction of what arrived (or of `charged` bytes, where ASTRA-sim charges another size)."""
        self.send(to, send_parts, key, nbytes)
        received = self.wire_bytes(recv_parts) if nbytes is None else nbytes
        yield self.recv(frm, recv_parts, key, received)
        self.land(frm, recv_parts, key, reduce)
        if charged is None:
            charged = received if reduce else 0
        yield self.handled(charged)
