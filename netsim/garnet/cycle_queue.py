# cython: boundscheck=False, wraparound=False
"""A FIFO of cycles, non-decreasing from front to back: a VC buffer's ready cycles (one per flit) and
an output unit's credits on their way back (the cycle from which each is usable).

It is a ring buffer of 64-bit integers (an `array`), which the compiled core reads and writes as C
integers: no Python int per flit or credit, where a deque or list would box each one. Indices count
from the front; the buffer doubles when full (a VC's ready cycles never outnumber its depth, so that
happens at most a few times at the start). Its indices are always in range (masked), so the compiled
build checks no bounds (the directive above, a comment to Python)."""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (types only)
    from netsim.garnet.departures import Departures


class CycleQueue:
    """Cycles in non-decreasing order, front first (see the module docstring)."""

    __slots__ = ("buf", "head", "count", "mask")

    def __init__(self, capacity: int = 4):
        size = 4
        while size < capacity:
            size *= 2
        self.buf = array("q", bytes(8 * size))
        self.head = 0  # index in `buf` of the front
        self.count = 0  # cycles held
        self.mask = size - 1  # the buffer's size is a power of two: index & mask wraps

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, k: int) -> int:
        if not 0 <= k < self.count:
            raise IndexError(f"CycleQueue index {k} out of range (it holds {self.count})")
        return self.buf[(self.head + k) & self.mask]

    def __iter__(self):
        return iter(self.to_list())

    def __repr__(self) -> str:
        return f"CycleQueue({self.to_list()})"

    def to_list(self) -> list[int]:
        """The cycles, front first."""
        return [self.buf[(self.head + k) & self.mask] for k in range(self.count)]

    def front(self) -> int:
        """The front cycle (the queue must not be empty)."""
        return self.buf[self.head]

    def back(self) -> int:
        """The back cycle (the queue must not be empty)."""
        return self.buf[(self.head + self.count - 1) & self.mask]

    def at(self, k: int) -> int:
        """The cycle `k` places from the front (0 <= k < size)."""
        return self.buf[(self.head + k) & self.mask]

    def push(self, cycle: int) -> None:
        """Append `cycle` at the back (not earlier than the back)."""
        if self.count > self.mask:
            self._grow()
        self.buf[(self.head + self.count) & self.mask] = cycle
        self.count += 1

    def push_shifted(self, departures: Departures, delay: int) -> None:
        """Append every one of the cycles of `departures` `delay` later."""
        for k in range(departures.count):
            self.push(departures.at(k) + delay)

    def pop(self) -> int:
        """Remove and return the front cycle (the queue must not be empty)."""
        cycle = self.buf[self.head]
        self.head = (self.head + 1) & self.mask
        self.count -= 1
        return cycle

    def drop(self, n: int) -> None:
        """Remove the `n` front cycles (n <= size)."""
        self.head = (self.head + n) & self.mask
        self.count -= n

    def pop_sum(self, n: int) -> int:
        """Remove the `n` front cycles (n <= size); returns their sum."""
        total = 0
        for _ in range(n):
            total += self.buf[self.head]
            self.head = (self.head + 1) & self.mask
        self.count -= n
        return total

    def count_until(self, cycle: int) -> int:
        """How many cycles are at most `cycle` (they are the front ones: bisection)."""
        lo, hi = 0, self.count
        while lo < hi:
            mid = (lo + hi) >> 1
            if self.buf[(self.head + mid) & self.mask] <= cycle:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def clear(self) -> None:
        self.head = 0
        self.count = 0

    def shift(self, span: int) -> None:
        """Every cycle `span` later (fast-forward)."""
        for k in range(self.count):
            self.buf[(self.head + k) & self.mask] += span

    def _grow(self) -> None:
        """Double the buffer, the front moving to index 0."""
        cycles = self.to_list()
        self.buf = array("q", bytes(16 * (self.mask + 1)))
        self.mask = 2 * self.mask + 1
        self.head = 0
        for k in range(len(cycles)):
            self.buf[k] = cycles[k]
