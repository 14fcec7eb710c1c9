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
from typing import Any, Hashable

import simpy

from netsim.api import NetworkAPI

GATHERING_OPS = ("all-gather", "gather")  # ops whose nbytes is one rank's shard, not the whole input


def split_bytes(nbytes: int, parts: int) -> int:
    """Bytes in one of `parts` equal slices (rounded up so no byte is lost; at least 1)."""
    return max(1, math.ceil(nbytes / parts))


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
    reduce_ns_per_byte: float  # 3 / local-mem-bw, or 0 when local memory is free
    window: int = 0  # direct algorithms: messages in flight at once (0 = all)
    variant: int = 0  # the chunk's index: double-binary-tree alternates trees on it
    data: Any = None  # functional mode: the phase's payload (system.functional), else None

    @property
    def size(self) -> int:
        return len(self.group)

    @property
    def env(self) -> simpy.Environment:
        return self.endpoint.env

    @property
    def unit(self) -> int:
        """Wire bytes of one part."""
        return unit_bytes(self.op, self.nbytes, self.size)

    def send(self, to: int, parts: tuple | None, key: Hashable, nbytes: int | None = None) -> None:
        """Send `parts` (a (first, stop) range, or None for a data-less message) to rank `to`."""
        if nbytes is None:
            nbytes = (parts[1] - parts[0]) * self.unit if parts else 1
        self.endpoint.send(self.group[to], nbytes, (self.tag, key))
        if self.data is not None and parts is not None:
            self.data.post(self.group[to], (self.tag, key), parts)

    def recv(self, frm: int, parts: tuple | None, key: Hashable, nbytes: int | None = None) -> simpy.Event:
        """The event of receiving what rank `frm` sent with the same `key` (sizes as in `send`)."""
        if nbytes is None:
            nbytes = (parts[1] - parts[0]) * self.unit if parts else 1
        return self.endpoint.recv(self.group[frm], nbytes, (self.tag, key))

    def land(self, frm: int, parts: tuple, key: Hashable, reduce: bool, nbytes: int | None = None) -> float:
        """Apply a received message (add it in when `reduce`, else copy it); returns the reduction's cost in ns."""
        if self.data is not None and parts is not None:
            self.data.land(self.group[frm], (self.tag, key), parts, reduce)
        if not reduce:
            return 0.0
        if nbytes is None:
            nbytes = (parts[1] - parts[0]) * self.unit
        return self.reduce_ns_per_byte * nbytes

    def exchange(self, to: int, frm: int, send_parts, recv_parts, key: Hashable, reduce: bool,
                 nbytes: int | None = None):
        """One step: send to `to`, wait for `frm`'s message, apply it, then pay endpoint delay (+ reduction)."""
        self.send(to, send_parts, key, nbytes)
        yield self.recv(frm, recv_parts, key, nbytes)
        cost = self.land(frm, recv_parts, key, reduce, nbytes)
        yield self.env.timeout(self.endpoint_delay + cost)
