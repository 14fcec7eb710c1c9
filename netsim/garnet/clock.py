"""Integer-cycle calendar on the shared simpy Environment (which counts nanoseconds).

Components (routers, NIC injectors and receivers) are woken at whole cycles. All wake-ups for one
cycle share one bucket, and an idle router costs nothing. A component has `next_wake` (its
earliest pending wake-up, or NEVER) and `step(cycle)`; a later wake-up request than the pending
one is dropped, because the component re-derives what it waits for after each step.

The calendar (a heap of cycles that have a bucket) is the clock's own. It keeps at most one simpy
event armed, for its earliest cycle, and after a cycle it runs the following ones itself, without
a simpy event, for as long as they come strictly before anything else on the simpy queue
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

from netsim.units import ns_to_cycles

# "No wake-up pending": larger than any cycle reached. The largest short int of mypyc, and Final so
# that the compiled build compares with a constant (1 << 62 was a boxed int there: ~5% slower at load)
NEVER: Final = (1 << 62) - 1
INLINE_CYCLES = 64  # cycles run without handing back to simpy (see the module docstring)


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

    __slots__ = ("env", "clock_ghz", "buckets", "due", "armed", "limit", "cycle", "steps", "after_cycle",
                 "hook_at")

    def __init__(self, env: simpy.Environment, clock_ghz: float):
        self.env = env
        self.clock_ghz = clock_ghz
        self.buckets: dict[int, list] = {}  # cycle -> components to step then, in wake-up order
        self.due: list[int] = []  # heap of the cycles in `buckets`
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
            bucket = self.buckets.get(cycle)
            if bucket is None:
                self.buckets[cycle] = [component]
                heappush(self.due, cycle)
                if cycle < self.armed:
                    self._arm(cycle)
            else:
                bucket.append(component)

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
        return tuple(sorted((k - c, tuple(map(id, bucket))) for k, bucket in self.buckets.items()))

    def sketch(self, c: int) -> tuple:
        """Pending wake-ups relative to cycle `c`, and how many components each (fast-forward's cheap
        first look at a state): two tuples, in cycle order."""
        buckets = self.buckets
        cycles = sorted(buckets)
        return tuple([k - c for k in cycles]), tuple([len(buckets[k]) for k in cycles])

    def jump(self, span: int) -> None:
        """Move the current cycle, every pending wake-up and simpy's clock `span` cycles later (a
        fast-forward). `buckets` and `due` change in place: `_fire`'s loop holds them."""
        buckets = {cycle + span: bucket for cycle, bucket in self.buckets.items()}
        self.buckets.clear()
        self.buckets.update(buckets)
        self.due[:] = sorted(buckets)  # a sorted list is a heap
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
        buckets = self.buckets
        after_cycle = self.after_cycle
        clock_ghz = self.clock_ghz
        limit = self.limit  # set by Network.run before simpy runs this; no step changes it
        cycle = self.armed
        budget = INLINE_CYCLES
        while True:
            # Step the components of `cycle`'s bucket (inline: this runs for every busy cycle). An
            # entry whose component was rescheduled to an earlier cycle meanwhile is stale: skipped.
            # The bucket stays in `buckets` while it runs, so a component woken for this very cycle
            # (a NIC given a message by a traffic source) is appended to it and stepped in this
            # pass, after the others, rather than in a second pass with its own bucket.
            heappop(due)
            bucket = buckets[cycle]
            self.cycle = cycle
            for component in bucket:
                if component.next_wake == cycle:
                    component.next_wake = NEVER
                    component.step(cycle)
            del buckets[cycle]
            self.steps += len(bucket)
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
