"""The chunk scheduler: per-group phase queues shared by the group's NPUs, and dimension ordering.

Each dimension of each NPU has `queues-per-dimension` queues; a chunk goes to queue
(chunk index mod queues) and each NPU runs at most `active-chunks-per-dimension` phases of a queue
at once. As in ASTRA-sim the slots are each NPU's own: an NPU starts its next queued phase as soon
as it has a free slot, whatever the other members are doing (so a double binary tree's next chunk
starts at a leaf while the previous chunk still travels down to the others, and an NPU that
reaches a phase first starts it and sends first).

Every NPU of a dimension's group queues the same phases there, so one queue object serves the
whole group and keeps one *sequence* of phases that every member runs in the same order. A member
with a free slot at the end of the sequence appends one of its queued phases: the best of those
every member has queued, else its best; a member whose next phase in the sequence it has not
queued yet waits for it. This is what makes the schedule deadlock-free within a group under any
timing: with orders chosen per NPU, two NPUs whose timings differ (a congested packet network)
could each give their last slot to a different chunk and wait for each other forever. Here a phase
is appended only by a member that queued it, so after the chunk's previous phase was appended;
hence the earliest appended phase that some member has not finished is running at every such
member (anything that could hold one back was appended earlier), needs no other resource, and
completes. Before its start, an NPU's wait is its queueing delay.

Across groups that is no proof: a chunk's consecutive phases may run in groups that do not nest (a
hierarchical collective over a strided communicator: NPU pairs in one dimension, quadruples in the
next), so a phase one member appends may wait for a partner still in the previous phase in its own
other group, behind a phase there that waits for this group. Per message, on torus-4x4, a tp2 x dp8
transformer did so: NPU 0 appended collective 7's third phase, which its partner NPU 2 could not
start before collective 5's second phase in NPU 2's dimension-1 group, whose first phase NPU 2 was
to run after collective 7's in the pair's group. Preferring the phases every member has queued
(collective 5's first phase was, there) keeps a group from committing to such a phase while another
is ready everywhere, which removed that deadlock; a run that still cannot progress says so
(netsim.errors.DeadlockError, with every wait).

A member's order among its queued phases is: explicit collective `priority` (lower first), then
`intra-dimension-scheduling` (fifo: no preference; smallest-first: fewest bytes first;
less-remaining-phases-first: the chunk closest to done first), then `scheduling-policy` on the
collective's issue order (FIFO earliest first, LIFO latest first), then the order it queued them.
Everything is deterministic.

With `phase-barrier = "all"` (ASTRA-sim v1's stream synchronizer) a chunk leaves a phase, and
frees its slot, only once every NPU of the collective has finished that phase (`barrier`).
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from typing import Hashable

import simpy

from system.collectives import Communicator

INTRA_POLICIES = ("fifo", "smallest-first", "less-remaining-phases-first")
INTER_POLICIES = ("ascending", "round-robin", "themis")


class GroupQueue:
    """One queue of one dimension's group: a sequence of phases every member runs in order, at most
    `capacity` at a time per member (see the module docstring)."""

    def __init__(self, members: tuple, capacity: int):
        self.capacity = capacity
        self.waiting: dict[Hashable, dict] = {}  # phase -> {member: start event} of members that queued it
        self.queued = {m: [] for m in members}  # per member: heap of (order, count, phase) not yet in the sequence
        self._count = itertools.count()
        self.sequence: deque = deque()  # appended phases not yet started by every member
        self.unstarted: dict[Hashable, int] = {}  # appended phase -> members that have not started it
        self._dropped = 0  # phases removed from the front of `sequence` (started everywhere)
        self.position = dict.fromkeys(members, 0)  # per member: phases of the sequence it has started
        self.running = dict.fromkeys(members, 0)  # per member: phases started and not finished

    def request(self, env: simpy.Environment, npu: int, key: Hashable, order: tuple) -> simpy.Event:
        """Queue `npu`'s part of phase `key`; the event fires when `npu` may start it."""
        event = env.event()
        self.waiting.setdefault(key, {})[npu] = event
        if key not in self.unstarted:
            heapq.heappush(self.queued[npu], (order, next(self._count), key))
        self._advance(npu)
        return event

    def release(self, npu: int, key: Hashable) -> None:
        """`npu` finished phase `key`: its slot frees for its next phase."""
        self.running[npu] -= 1
        self._advance(npu)

    def _next_phase(self, queued: list) -> Hashable:
        """Take the phase to append from a member's queued ones (a heap of (order, count, phase)):
        its best that every member has queued, else its best (see the module docstring)."""
        members = len(self.position)
        best = min((entry for entry in queued if len(self.waiting.get(entry[2], ())) == members), default=None)
        if best is None or best is queued[0]:
            return heapq.heappop(queued)[2]
        queued.remove(best)
        heapq.heapify(queued)
        return best[2]

    def _advance(self, npu: int) -> None:
        """Start `npu`'s next phases of the sequence while it has free slots, appending one of its
        queued phases (`_next_phase`) when it is at the end."""
        queued = self.queued[npu]
        while self.running[npu] < self.capacity:
            index = self.position[npu] - self._dropped
            if index == len(self.sequence):
                while queued and npu not in self.waiting.get(queued[0][2], ()):  # started already
                    heapq.heappop(queued)
                if not queued:
                    return
                key = self._next_phase(queued)
                self.sequence.append(key)
                self.unstarted[key] = len(self.position)
            key = self.sequence[index]
            event = self.waiting.get(key, {}).pop(npu, None)
            if event is None:  # this member has not queued its next phase yet
                return
            self.position[npu] += 1
            self.running[npu] += 1
            event.succeed()
            self.unstarted[key] -= 1
            if not self.unstarted[key]:
                del self.waiting[key]
                while self.sequence and not self.unstarted.get(self.sequence[0], 1):
                    del self.unstarted[self.sequence.popleft()]
                    self._dropped += 1


class Scheduler:
    """State the NPUs of one simulation share: group queues and communicator ids (for message tags)."""

    def __init__(self, config, symmetric):
        """`symmetric`: the system.symmetric.SymmetricCollectives that decides which collectives run as one
        representative NPU (build_systems passes it)."""
        self.config = config
        self.sign = 1 if config.scheduling_policy == "FIFO" else -1
        self._queues: dict[tuple, GroupQueue] = {}
        self._communicators: dict[tuple, int] = {}
        self._over_dims: dict[tuple, Communicator] = {}
        self.plans: dict[tuple, tuple] = {}  # a collective's planning, shared by members that issue it alike
        self.symmetric = symmetric
        self._barriers: dict[Hashable, list] = {}  # key -> [NPUs still to arrive, event]

    def communicator_id(self, members: tuple) -> int:
        """A small int naming a communicator, the same on every member."""
        return self._communicators.setdefault(members, len(self._communicators))

    def over_dims(self, topology, npu: int, dims: tuple):
        """The communicator of `npu` over topology dimensions `dims`, built once and shared by its members
        (every NPU building its own made a run over all dimensions O(NPUs^2) in time and memory)."""
        dims = tuple(sorted(set(dims)))
        coords = topology.coords(npu)
        key = (dims, tuple(c for d, c in enumerate(coords) if d not in dims))
        comm = self._over_dims.get(key)
        if comm is None:
            comm = self._over_dims[key] = Communicator.over_dims(topology, npu, dims)
        return comm

    def queue(self, group: tuple, chunk: int) -> GroupQueue:
        key = (group, chunk % self.config.queues_per_dimension)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = GroupQueue(group, self.config.active_chunks_per_dimension)
        return queue

    def barrier(self, env: simpy.Environment, key: Hashable, size: int) -> simpy.Event:
        """An event that fires once `size` NPUs have arrived at the barrier `key`."""
        entry = self._barriers.get(key)
        if entry is None:
            entry = self._barriers[key] = [size, env.event()]
        entry[0] -= 1
        if entry[0] == 0:
            del self._barriers[key]
            entry[1].succeed()
        return entry[1]

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
