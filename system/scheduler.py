"""The chunk scheduler: per-group phase queues shared by the group's NPUs, and dimension ordering.

Each dimension of each NPU has `queues-per-dimension` queues; a chunk goes to queue
(chunk index mod queues) and at most `active-chunks-per-dimension` chunks run in a queue at once.
Every NPU of a dimension's group has the same phases in that dimension's queues, so one queue
object serves the whole group, and a phase is *granted* only once every member has queued it.
This is what makes the schedule deadlock-free under any timing: with per-NPU queues, two NPUs
whose timings differ (a congested packet network) could each give their last slot to a different
chunk and wait for each other forever; here a granted phase has all its members present, needs
no other resource, and so always completes. Before the grant, an NPU's wait is its queueing delay.

Among the ready phases of a queue the order is: explicit collective `priority` (lower first),
then `intra-dimension-scheduling` (fifo: no preference; smallest-first: fewest bytes first;
less-remaining-phases-first: the chunk closest to done first), then `scheduling-policy` on the
collective's issue order (FIFO earliest first, LIFO latest first), then ready order. Everything
is deterministic.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Hashable

import simpy

INTRA_POLICIES = ("fifo", "smallest-first", "less-remaining-phases-first")
INTER_POLICIES = ("ascending", "round-robin", "themis")


@dataclass
class _Pending:
    """A phase some members have queued; `events` are their grant events by NPU."""

    order: tuple
    events: dict = field(default_factory=dict)
    running: int = 0  # members still running it once granted


class GroupQueue:
    """One queue of one dimension's group: grants fully-present phases, `capacity` at a time."""

    def __init__(self, size: int, capacity: int):
        self.size = size
        self.capacity = capacity
        self.active = 0
        self.pending: dict[Hashable, _Pending] = {}
        self.ready: list = []  # heap of (order, ready index, key)
        self._ready_count = itertools.count()

    def request(self, env: simpy.Environment, npu: int, key: Hashable, order: tuple) -> simpy.Event:
        """Queue `npu`'s part of phase `key`; the event fires when the phase may start."""
        entry = self.pending.get(key)
        if entry is None:
            entry = self.pending[key] = _Pending(order)
        event = env.event()
        entry.events[npu] = event
        if len(entry.events) == self.size:
            heapq.heappush(self.ready, (entry.order, next(self._ready_count), key))
            self._dispatch()
        return event

    def release(self, key: Hashable) -> None:
        """One member finished phase `key`; the slot frees when all have."""
        entry = self.pending[key]
        entry.running -= 1
        if entry.running == 0:
            del self.pending[key]
            self.active -= 1
            self._dispatch()

    def _dispatch(self) -> None:
        while self.ready and self.active < self.capacity:
            _order, _index, key = heapq.heappop(self.ready)
            entry = self.pending[key]
            entry.running = self.size
            self.active += 1
            for event in entry.events.values():
                event.succeed()


class Scheduler:
    """State the NPUs of one simulation share: group queues and communicator ids (for message tags)."""

    def __init__(self, config):
        self.config = config
        self.sign = 1 if config.scheduling_policy == "FIFO" else -1
        self._queues: dict[tuple, GroupQueue] = {}
        self._communicators: dict[tuple, int] = {}

    def communicator_id(self, members: tuple) -> int:
        """A small int naming a communicator, the same on every member."""
        return self._communicators.setdefault(members, len(self._communicators))

    def queue(self, group: tuple, chunk: int) -> GroupQueue:
        key = (group, chunk % self.config.queues_per_dimension)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = GroupQueue(len(group), self.config.active_chunks_per_dimension)
        return queue

    def order(self, priority: float | None, issue: tuple, nbytes: int, remaining: int) -> tuple:
        """The sort key of a ready phase (see the module docstring)."""
        intra = self.config.intra_dimension_scheduling
        second = nbytes if intra == "smallest-first" else remaining if intra == "less-remaining-phases-first" else 0
        return (float("inf") if priority is None else priority, second, tuple(self.sign * x for x in issue))


def dimension_order(policy: str, dims: tuple, chunk: int, load: dict, bandwidth: dict) -> tuple:
    """The order a chunk visits its communicator's dimensions (`inter-dimension-scheduling`).

    ascending: 0, 1, 2...; round-robin: chunk c starts at the c-th dimension; themis: least
    estimated load first, the load of a dimension being the bytes earlier chunks of the same
    communicator put on it divided by its bandwidth (the same on every member, so all agree).
    """
    if policy == "round-robin" and dims:
        shift = chunk % len(dims)
        return dims[shift:] + dims[:shift]
    if policy == "themis":
        return tuple(sorted(dims, key=lambda d: (load.get(d, 0.0) / bandwidth[d], d)))
    return dims
