"""Slots (netsim/garnet/crossbar.py): the cycles packets in flight take a link or a crossbar input
in packet fidelity. Whatever the takes, `free` and `next_free` answer as on the plain set of every
flit start taken since the slots were last clear (a cycle is free when no start is less than
`width` cycles from it), and the signature lists the same starts as runs, one way only (random
takes against that set; the compiled build's when it is loaded)."""

import random

import pytest

from netsim.garnet.crossbar import Slots
from netsim.garnet.departures import evenly, listed

PRUNE_AT = 4096  # crossbar.PRUNE_AT (a C constant in the compiled build)


def starts(departures) -> list[int]:
    return [departures.at(k) for k in range(departures.count)]


def runs_of(cycles: list[int]) -> tuple:
    """Increasing cycles as runs (first, count, spacing), each as long as it goes, a lone cycle's
    spacing 0: the one form Slots.signature may give them in."""
    runs, i = [], 0
    while i < len(cycles):
        if i + 1 == len(cycles):
            runs.append((cycles[i], 1, 0))
            break
        j = i + 1
        while j + 1 < len(cycles) and cycles[j + 1] - cycles[j] == cycles[i + 1] - cycles[i]:
            j += 1
        runs.append((cycles[i], j - i + 1, cycles[i + 1] - cycles[i]))
        i = j + 1
    return tuple(runs)


@pytest.mark.parametrize("width", [1, 2, 3])
def test_slots_answer_as_the_set_of_the_starts_taken(width):
    rng = random.Random(width)
    for _ in range(40):
        slots, taken = Slots(width), set()
        now = rng.randrange(5)
        for _ in range(12):
            now += rng.choice((0, 1, 2, 7, 40))
            count = rng.choice((1, 3, 8, 30))
            first = now + rng.randrange(12)
            if rng.random() < 0.6:
                cycles = evenly(first, count, rng.choice((1, 2, 3)) * width)
            else:
                cycles = listed(sorted({first + rng.randrange(3 * count * width) for _ in range(count)}))
            if slots.clear_from <= now:
                taken.clear()
            taken.update(starts(cycles))
            slots.take(cycles, now)
            blocked = {t + d for t in taken for d in range(1 - width, width)}  # the cycles no flit may start at
            for cycle in range(now, max(taken) + 2 * width):
                assert slots.free(cycle) == (cycle not in blocked)
                expected = cycle
                while expected in blocked:
                    expected += 1
                assert slots.next_free(cycle) == expected
            for c in (now, now + rng.randrange(1, 4 * width * count)):
                assert slots.signature(c) == runs_of(sorted(t - c for t in taken if t >= c))


def test_long_lived_slots_drop_the_past_and_keep_their_answers():
    """A link that never clears (a packet always in flight) keeps only the cycles still asked about."""
    slots, taken = Slots(1), set()
    now = 0
    for step in range(3 * PRUNE_AT):
        cycles = listed([now + 1, now + 3])
        slots.take(cycles, now)
        taken.update(starts(cycles))
        now += 2
        if step % 500 == 0:
            assert [slots.next_free(c) for c in range(now, now + 6)] == [
                next(t for t in range(c, c + 10) if t not in taken) for c in range(now, now + 6)]
    assert len(slots.taken) <= PRUNE_AT + 2 * 4 + 2
