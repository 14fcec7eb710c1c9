"""Integer-cycle calendar on the shared simpy Environment (which counts nanoseconds).

Components (routers, NIC injectors and receivers) are woken at whole cycles. All wake-ups for one
cycle share one bucket, and an idle router costs nothing. A component has `next_wake` (its
earliest pending wake-up, or NEVER) and `step(cycle)`; a later wake-up request than the pending
one is dropped, because the component re-derives what it waits for after each step.

The calendar is the clock's own: a heap of the cycles that have a bucket, and the buckets on a wheel
of `WHEEL` slots, cycle c's at c % WHEEL while no other pending cycle holds that slot (one that finds
it held, WHEEL cycles or more ahead, keeps its bucket aside in `overflow`). With a dict by cycle,
wake-ups took 5x the instructions (callgrind, 8x8 torus at load 0.1: 92 M against 18 M): its keys
come and go in cycle order, and the slots they leave made every look-up of a new cycle probe on. The clock keeps at most one simpy event armed, for its
earliest cycle, and after a cycle it runs the following ones itself, without a simpy event, for as long as they come strictly before anything else on the simpy queue
(`env.peek()`) and no later than the end of the current `Network.run` (`limit`): simpy would have
run them next anyway, in the same order. It hands back to simpy at least every `INLINE_CYCLES`
cycles, so that a run's monitor (progress, link sampling, Ctrl-C), called between simpy events,
keeps being called.
"""

from __future__ import annotations

import math
from heapq import heappop, heappush
from typing import Callable, Final

import simpy
from simpy.events import Timeout

from netsim.garnet.tables import counts
from netsim.units import ns_to_cycles

# "No wake-up pending": larger than any cycle reached, and within a C long long; Final, so that each
# compiled module, which declares its own C copy, compares with a constant
NEVER: Final = (1 << 62) - 1
INLINE_CYCLES = 64  # cycles run without handing back to simpy (see the module docstring)
WHEEL = 1024  # slots of the calendar's wheel (a power of two; see the module docstring)


def relative(wake: int, c: int) -> int:
    """A wake-up cycle as seen from cycle `c` (a state's signature compares such offsets), NEVER kept as is."""
    return wake if wake == NEVER else wake - c


class Component:
    """What the clock steps (routers, NIC injection and ejection ports): `next_wake`, the earliest
    cycle it is due to step (NEVER: none), and `step(cycle)`, which its subclasses define."""

    __slots__ = ("next_wake",)

    def __init__(self):
        self.next_wake = NEVER

    def step(self, cycle: int) -> None:
        raise NotImplementedError


class CycleClock:
    """Buckets of components to step, run in cycle order; see the module docstring."""

    __slots__ = ("env", "clock_ghz", "slots", "slot_cycle", "overflow", "due", "armed", "limit", "cycle", "steps",
                 "after_cycle", "hook_at")

    def __init__(self, env: simpy.Environment, clock_ghz: float):
        self.env = env
        self.clock_ghz = clock_ghz
        # a bucket: the components to step in a cycle, in wake-up order
        self.slots = [[] for _ in range(WHEEL)]  # the bucket of cycle slot_cycle[i] (emptied, not dropped, after it)
        self.slot_cycle = counts(WHEEL, -1)  # per slot: the cycle whose bucket it holds (-1: none)
        self.overflow: dict[int, list] = {}  # cycle -> its bucket, where another cycle held its slot
        self.due: list[int] = []  # heap of the cycles that have a bucket
        self.armed = NEVER  # cycle of the simpy event that will run the calendar (NEVER: none)
        self.limit = math.inf  # ns: the end of the current run (`Network.run(until=)`)
        self.cycle = 0  # the cycle being (or last) processed
        self.steps = 0  # component steps run (reported as `events`)
        # Called after every cycle from `hook_at` on, and after any cycle that leaves the calendar
        # empty (deadlock detection, invariant checks, fast-forward probes); the hook sets `hook_at`
        self.after_cycle: Callable[[int], None] | None = None
        self.hook_at = 0

    def now_cycle(self) -> int:
        """The first whole cycle at or after the environment's current time."""
        return ns_to_cycles(self.env.now, self.clock_ghz)

    def ns(self, cycle: int) -> float:
        """Nanoseconds of a cycle (or of a cycle count with a fraction: busy time), computed, never
        accumulated."""
        return cycle / self.clock_ghz

    def wake(self, component: Component, cycle: int) -> None:
        """Step `component` at `cycle` unless it is already due to step earlier or then."""
        if cycle < component.next_wake:
            component.next_wake = cycle
            slot = cycle & (WHEEL - 1)
            if self.slot_cycle[slot] == cycle:  # (the usual case: the cycle has its bucket already)
                self.slots[slot].append(component)
            elif self._place(component, cycle) and cycle < self.armed:
                self._arm(cycle)

    def bucket(self, cycle: int) -> list | None:
        """The components due to step at `cycle`, in wake-up order (None: none)."""
        if self.overflow and cycle in self.overflow:
            return self.overflow[cycle]
        slot = cycle & (WHEEL - 1)
        return self.slots[slot] if self.slot_cycle[slot] == cycle else None

    def _place(self, component: Component, cycle: int) -> bool:
        """Append `component` to `cycle`'s bucket, whatever its next_wake; returns True if the bucket
        is new (a cycle the calendar did not have)."""
        bucket = self.bucket(cycle)
        if bucket is not None:
            bucket.append(component)
            return False
        slot = cycle & (WHEEL - 1)
        if self.slot_cycle[slot] < 0:
            self.slot_cycle[slot] = cycle
            bucket = self.slots[slot]
            bucket.append(component)
        else:
            self.overflow[cycle] = [component]
        heappush(self.due, cycle)
        return True

    def _drop(self, cycle: int) -> None:
        """Forget `cycle`'s bucket (it has been stepped, or moves: `jump`)."""
        if self.overflow and cycle in self.overflow:
            del self.overflow[cycle]
        else:
            slot = cycle & (WHEEL - 1)
            self.slot_cycle[slot] = -1
            bucket = self.slots[slot]  # (emptied in place, as a typed local: a C call compiled)
            bucket.clear()

    def last_inline_cycle(self) -> int:
        """The last cycle the calendar could run without handing back to simpy (the rule of `_fire`:
        strictly before the next simpy event, no later than `limit`); NEVER if nothing bounds it."""
        horizon, end = self.env.peek(), self.limit
        if horizon == math.inf and end == math.inf:
            return NEVER
        last = math.ceil(min(horizon, end) * self.clock_ghz + 1e-9)
        while last >= 0 and (self.ns(last) >= horizon or self.ns(last) > end):
            last -= 1
        return last

    def signature(self, c: int) -> tuple:
        """Pending wake-ups relative to cycle `c` (fast-forward)."""
        return tuple([(k - c, tuple(map(id, self.bucket(k)))) for k in sorted(self.due)])

    def sketch(self, c: int) -> tuple:
        """Pending wake-ups relative to cycle `c`, and how many components each (fast-forward's cheap
        first look at a state): two tuples, in cycle order."""
        cycles = sorted(self.due)
        return tuple([k - c for k in cycles]), tuple([len(self.bucket(k)) for k in cycles])

    def jump(self, span: int) -> None:
        """Move the current cycle, every pending wake-up and simpy's clock `span` cycles later (a
        fast-forward). `due` changes in place: `_fire`'s loop holds it."""
        moved = [(cycle, list(self.bucket(cycle))) for cycle in sorted(self.due)]
        for cycle, _ in moved:
            self._drop(cycle)
        self.due.clear()
        for cycle, bucket in moved:
            for component in bucket:  # (stale entries move too; next_wake moved with its network: `shift`)
                self._place(component, cycle + span)
        self.cycle += span
        self.env._now = self.ns(self.cycle)

    def _arm(self, cycle: int) -> None:
        """Have simpy run the calendar at `cycle`; an event armed for a later cycle goes stale."""
        self.armed = cycle
        event = Timeout(self.env, max(0.0, cycle / self.clock_ghz - self.env.now), cycle)
        event.callbacks.append(self._fire)

    def _fire(self, event) -> None:
        if event._value != self.armed:  # stale: an earlier cycle was armed after this one
            return
        env = self.env
        peek = env.peek
        due = self.due
        after_cycle = self.after_cycle
        clock_ghz = self.clock_ghz
        limit = self.limit  # set by Network.run before simpy runs this; no step changes it
        cycle = self.armed
        budget = INLINE_CYCLES
        while True:
            # Step the components of `cycle`'s bucket (inline: this runs for every busy cycle). An
            # entry whose component was rescheduled to an earlier cycle meanwhile is stale: skipped.
            # The bucket stays the cycle's while it runs, so a component woken for this very cycle
            # (a NIC given a message by a traffic source) is appended to it and stepped in this
            # pass, after the others, rather than in a second pass with its own bucket.
            heappop(due)
            bucket = self.bucket(cycle)
            self.cycle = cycle
            for component in bucket:
                if component.next_wake == cycle:
                    component.next_wake = NEVER
                    component.step(cycle)
            self.steps += len(bucket)
            self._drop(cycle)
            if after_cycle is not None and (cycle >= self.hook_at or not due):
                after_cycle(cycle)
            if not due:
                self.armed = NEVER
                return
            cycle = due[0]
            at = cycle / clock_ghz
            budget -= 1
            if not budget or at >= peek() or at > limit:  # back to simpy
                self._arm(cycle)
                return
            # Nothing else is scheduled before this cycle: run it now. Setting simpy's clock (here
            # and in `jump`) is the one reach into its internals, so components reading env.now see
            # this cycle.
            env._now = at
