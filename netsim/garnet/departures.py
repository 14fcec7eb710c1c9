"""The cycles at which the flits of one grant leave a crossbar or a NIC onto a link ("departures"):
`count` cycles from `first`, `spacing` apart (evenly: the usual case), or listed one by one where a
flit held back by its credit, by its own arrival or by a shared link breaks the even spacing.

An object with integer fields, where a `range` or a list would cost a Python int per look: the
compiled core reads `first`, `last` and `count` as C integers and builds even ones without the
constructor's argument parsing (`evenly`). Even departures hold no Python object, so the compiled
core allocates them (one per grant) outside the garbage collector; listed ones are a subclass."""

from __future__ import annotations


class Departures:
    """Increasing cycles, one per flit (see the module docstring): build with `evenly` or `listed`."""

    # first, last: the first and last cycle; spacing: between consecutive cycles (0 when listed)
    __slots__ = ("first", "last", "count", "spacing")

    def at(self, k: int) -> int:
        """The `k`-th cycle (0 <= k < count)."""
        return self.first + k * self.spacing

    def total(self) -> int:
        """The sum of the cycles."""
        return run_sum(self.first, self.count, self.spacing)

    def holds(self, cycle: int) -> bool:
        """Is `cycle` one of the cycles?"""
        if not self.first <= cycle <= self.last:
            return False
        return (cycle - self.first) % self.spacing == 0

    def to_list(self) -> list[int]:
        return [self.at(k) for k in range(self.count)]

    def shifted(self, span: int) -> Departures:
        """The same cycles `span` later (fast-forward)."""
        return evenly(self.first + span, self.count, self.spacing)

    def __repr__(self) -> str:
        return f"Departures({self.to_list()})"


class Listed(Departures):
    """Departures that are not even: `cycles`, one by one (`spacing` 0)."""

    __slots__ = ("cycles",)

    def at(self, k: int) -> int:
        return self.cycles[k]

    def total(self) -> int:
        return sum(self.cycles)

    def holds(self, cycle: int) -> bool:
        return cycle in self.cycles

    def shifted(self, span: int) -> Departures:
        return listed([cycle + span for cycle in self.cycles])


def run_sum(first: int, count: int, spacing: int) -> int:
    """The sum of `count` cycles from `first`, `spacing` apart (also a CycleQueue run's)."""
    return count * first + spacing * (count * (count - 1) // 2)


def evenly(first: int, count: int, spacing: int) -> Departures:
    """`count` cycles from `first`, `spacing` apart."""
    departures = Departures.__new__(Departures)
    departures.first = first
    departures.count = count
    departures.spacing = spacing
    departures.last = first + (count - 1) * spacing
    return departures


def listed(cycles: list[int]) -> Departures:
    """The increasing `cycles` (at least one)."""
    departures = Listed.__new__(Listed)
    departures.first = cycles[0]
    departures.last = cycles[len(cycles) - 1]
    departures.count = len(cycles)
    departures.spacing = 0
    departures.cycles = cycles
    return departures


NONE = evenly(0, 0, 1)  # no cycles: what an output unit has sent into a VC before its first flit
