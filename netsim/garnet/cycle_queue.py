# cython: boundscheck=False, wraparound=False
"""A FIFO of cycles, non-decreasing from front to back: a VC buffer's ready cycles (one per flit) and
an output unit's credits on their way back (the cycle from which each is usable).

It holds *runs*, each `count` cycles from `first`, `spacing` apart: a packet's flits usually leave
evenly (`Departures`), so its ready cycles or credits go in and out as one run, whatever its length
(a 104-flit packet cost 104 pushes, one per flit, when the queue held cycles one by one: 13% of a
1024-NPU all-reduce). A cycle pushed alone extends the last run where it fits its spacing.

The runs are a ring buffer of 64-bit integers (an `array`, three per run), which the compiled core
reads and writes as C integers: no Python int per flit or credit. Indices count cycles from the
front; `at` remembers the run it last found, so reading the cycles front to back (the per-flit
loops of crossbar.py) walks the runs once. The front cycle is also kept in a field of its own
(`front_cycle`): allocators look at it far more often than anything changes it, and reading it from
the buffer cost a cache miss each time on a 1024-NPU network. The buffer doubles when full. Its indices are always in
range (masked), so the compiled build checks no bounds (the directive above, a comment to Python)."""

from __future__ import annotations

from array import array

from netsim.garnet.departures import Departures, run_sum

FIRST, COUNT, SPACING = 0, 1, 2  # a run's fields, at 3 * (its slot) + field in `buf`


class CycleQueue:
    """Cycles in non-decreasing order, front first, held as runs (see the module docstring)."""

    __slots__ = ("buf", "head", "runs", "mask", "count", "seek_run", "seek_start", "front_cycle")

    def __init__(self):
        size = 4  # runs held before the buffer first grows (a packet or two in a VC is the usual)
        self.buf = array("q", bytes(24 * size))
        self.head = 0  # slot of the front run
        self.runs = 0  # runs held
        self.mask = size - 1  # the buffer holds a power-of-two number of runs: slot & mask wraps
        self.count = 0  # cycles held
        # where `at` last found a cycle: the run `seek_run` places from the front, preceded by
        # `seek_start` cycles (reset to the front run whenever the front changes)
        self.seek_run = 0
        self.seek_start = 0
        self.front_cycle = 0  # the front cycle, while the queue is not empty

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, k: int) -> int:
        if not 0 <= k < self.count:
            raise IndexError(f"CycleQueue index {k} out of range (it holds {self.count})")
        return self.at(k)

    def __iter__(self):
        return iter(self.to_list())

    def __repr__(self) -> str:
        return f"CycleQueue({self.to_list()})"

    def to_list(self) -> list[int]:
        """The cycles, front first."""
        cycles = []
        for r in range(self.runs):
            slot = 3 * ((self.head + r) & self.mask)
            first, spacing = self.buf[slot + FIRST], self.buf[slot + SPACING]
            for k in range(self.buf[slot + COUNT]):
                cycles.append(first + k * spacing)
        return cycles

    def relative(self, c: int, skip: int) -> tuple:
        """The cycles after the first `skip`, relative to cycle `c`, as runs (first - c, count, spacing),
        front first (a lone cycle's spacing 0): a fast-forward signature, built without a Python int per
        cycle (equal runs hold equal cycles)."""
        runs = []
        for r in range(self.runs):
            slot = 3 * ((self.head + r) & self.mask)
            first, count, spacing = self.buf[slot + FIRST], self.buf[slot + COUNT], self.buf[slot + SPACING]
            if skip >= count:
                skip -= count
                continue
            first += skip * spacing
            count -= skip
            skip = 0
            runs.append((first - c, count, spacing if count > 1 else 0))
        return tuple(runs)

    def front(self) -> int:
        """The front cycle (the queue must not be empty)."""
        return self.front_cycle

    def back(self) -> int:
        """The back cycle (the queue must not be empty)."""
        slot = 3 * ((self.head + self.runs - 1) & self.mask)
        return self.buf[slot + FIRST] + (self.buf[slot + COUNT] - 1) * self.buf[slot + SPACING]

    def at(self, k: int) -> int:
        """The cycle `k` places from the front (0 <= k < size)."""
        if k < self.seek_start:  # behind the last look: from the front again
            self.seek_run = 0
            self.seek_start = 0
        slot = 3 * ((self.head + self.seek_run) & self.mask)
        while k - self.seek_start >= self.buf[slot + COUNT]:
            self.seek_start += self.buf[slot + COUNT]
            self.seek_run += 1
            slot = 3 * ((self.head + self.seek_run) & self.mask)
        return self.buf[slot + FIRST] + (k - self.seek_start) * self.buf[slot + SPACING]

    def push(self, cycle: int) -> None:
        """Append `cycle` at the back (not earlier than the back)."""
        if self.runs:
            slot = 3 * ((self.head + self.runs - 1) & self.mask)
            count = self.buf[slot + COUNT]
            if count == 1:  # a lone cycle and this one make a run
                self.buf[slot + SPACING] = cycle - self.buf[slot + FIRST]
                self.buf[slot + COUNT] = 2
                self.count += 1
                return
            if cycle == self.buf[slot + FIRST] + count * self.buf[slot + SPACING]:  # the run's next
                self.buf[slot + COUNT] = count + 1
                self.count += 1
                return
        self._append(cycle, 1, 1)

    def push_shifted(self, departures: Departures, delay: int) -> None:
        """Append every one of the cycles of `departures` `delay` later."""
        if departures.spacing:  # even
            if departures.count == 1:
                self.push(departures.first + delay)
            elif departures.count:
                self._append(departures.first + delay, departures.count, departures.spacing)
        else:
            for k in range(departures.count):
                self.push(departures.at(k) + delay)

    def pop(self) -> int:
        """Remove and return the front cycle (the queue must not be empty)."""
        cycle = self.front_cycle
        self.drop(1)
        return cycle

    def drop(self, n: int) -> None:
        """Remove the `n` front cycles (n <= size)."""
        self.count -= n
        while n:
            slot = 3 * self.head
            count = self.buf[slot + COUNT]
            if n < count:  # part of the front run
                self.buf[slot + FIRST] += n * self.buf[slot + SPACING]
                self.buf[slot + COUNT] = count - n
                break
            n -= count
            self.head = (self.head + 1) & self.mask
            self.runs -= 1
        if self.count:
            self.front_cycle = self.buf[3 * self.head + FIRST]
        self.seek_run = 0
        self.seek_start = 0

    def pop_sum(self, n: int) -> int:
        """Remove the `n` front cycles (n <= size); returns their sum."""
        total = 0
        left = n
        r = 0
        while left:
            slot = 3 * ((self.head + r) & self.mask)
            take = min(left, self.buf[slot + COUNT])
            total += run_sum(self.buf[slot + FIRST], take, self.buf[slot + SPACING])
            left -= take
            r += 1
        self.drop(n)
        return total

    def count_until(self, cycle: int) -> int:
        """How many cycles are at most `cycle` (they are the front ones)."""
        total = 0
        for r in range(self.runs):
            slot = 3 * ((self.head + r) & self.mask)
            first, count, spacing = self.buf[slot + FIRST], self.buf[slot + COUNT], self.buf[slot + SPACING]
            if first + (count - 1) * spacing <= cycle:  # the whole run
                total += count
            else:  # part of it (spacing > 0 here), and none of the later runs
                if first <= cycle:
                    total += (cycle - first) // spacing + 1
                break
        return total

    def clear(self) -> None:
        self.head = 0
        self.runs = 0
        self.count = 0
        self.seek_run = 0
        self.seek_start = 0

    def shift(self, span: int) -> None:
        """Every cycle `span` later (fast-forward)."""
        self.front_cycle += span
        for r in range(self.runs):
            self.buf[3 * ((self.head + r) & self.mask) + FIRST] += span

    def _append(self, first: int, count: int, spacing: int) -> None:
        """A new run at the back."""
        if self.runs > self.mask:
            self._grow()
        slot = 3 * ((self.head + self.runs) & self.mask)
        if not self.runs:
            self.front_cycle = first
        self.buf[slot + FIRST] = first
        self.buf[slot + COUNT] = count
        self.buf[slot + SPACING] = spacing
        self.runs += 1
        self.count += count

    def _grow(self) -> None:
        """Double the buffer, the front run moving to slot 0."""
        size = self.mask + 1
        old = self.buf
        self.buf = array("q", bytes(48 * size))
        for r in range(self.runs):
            slot = 3 * ((self.head + r) & self.mask)
            for field in range(3):
                self.buf[3 * r + field] = old[slot + field]
        self.mask = 2 * size - 1
        self.head = 0
