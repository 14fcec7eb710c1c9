"""Integer-cycle calendar on the shared simpy Environment (which counts nanoseconds).

Components (routers, NIC injectors and receivers) are woken at whole cycles. All wake-ups for one
cycle share one bucket and one simpy event, so a busy cycle costs one simpy event however many
routers work in it, and an idle router costs nothing. A component has `next_wake` (its earliest
pending wake-up, or NEVER) and `step(cycle)`; a later wake-up request than the pending one is
dropped, because the component re-derives what it waits for after each step.
"""

from __future__ import annotations

import math
from typing import Callable

import simpy
from simpy.events import Timeout

NEVER = 1 << 62  # "no wake-up pending": larger than any cycle reached


class CycleClock:
    """Buckets of components to step, one simpy Timeout per cycle that has any."""

    __slots__ = ("env", "clock_ghz", "buckets", "cycle", "steps", "after_cycle")

    def __init__(self, env: simpy.Environment, clock_ghz: float):
        self.env = env
        self.clock_ghz = clock_ghz
        self.buckets: dict[int, list] = {}
        self.cycle = 0  # the cycle being (or last) processed
        self.steps = 0  # component steps run (reported as `events`)
        self.after_cycle: Callable[[int], None] | None = None  # progress / invariant hook

    def now_cycle(self) -> int:
        """The first whole cycle at or after the environment's current time."""
        return math.ceil(self.env.now * self.clock_ghz - 1e-9)

    def ns(self, cycle: int) -> float:
        """Nanoseconds of a cycle, computed from the integer (never accumulated)."""
        return cycle / self.clock_ghz

    def wake(self, component, cycle: int) -> None:
        """Step `component` at `cycle` unless it is already due to step earlier or then."""
        if cycle < component.next_wake:
            component.next_wake = cycle
            bucket = self.buckets.get(cycle)
            if bucket is None:
                self.buckets[cycle] = [component]
                event = Timeout(self.env, max(0.0, cycle / self.clock_ghz - self.env.now), cycle)
                event.callbacks.append(self._fire)
            else:
                bucket.append(component)

    def _fire(self, event) -> None:
        cycle = event._value
        bucket = self.buckets.pop(cycle)
        self.cycle = cycle
        for component in bucket:
            if component.next_wake == cycle:  # else a stale entry: it was rescheduled earlier
                component.next_wake = NEVER
                component.step(cycle)
        self.steps += len(bucket)
        if self.after_cycle is not None:
            self.after_cycle(cycle)
