"""CycleQueue (netsim/garnet/cycle_queue.py) holds runs of evenly spaced cycles: every operation
reads as on the plain list of its cycles, whatever runs the pushes made (random operations against
a list; the compiled build's when it is loaded)."""

import random

from netsim.garnet.cycle_queue import CycleQueue
from netsim.garnet.departures import evenly, listed


def test_runs_read_as_the_list_of_their_cycles():
    rng = random.Random(25)
    for _ in range(200):
        queue, cycles = CycleQueue(), []
        back = 0
        for _ in range(60):
            op = rng.random()
            if op < 0.5 or not cycles:  # push: one cycle, an even run or listed cycles
                count = rng.choice((1, 1, 2, 5, 104))
                first = back + rng.choice((0, 1, 3))
                if rng.random() < 0.7:
                    spacing = rng.choice((0, 1, 2)) if count > 1 else 1
                    departures = evenly(first, count, spacing)
                else:
                    departures = listed(sorted(first + rng.randrange(8) for _ in range(count)))
                delay = rng.randrange(3)
                if count == 1 and rng.random() < 0.5:
                    queue.push(departures.first + delay)
                else:
                    queue.push_shifted(departures, delay)
                cycles += [departures.at(k) + delay for k in range(departures.count)]
                back = cycles[-1]
            elif op < 0.65:
                assert queue.pop() == cycles.pop(0)
            elif op < 0.8:
                n = rng.randrange(len(cycles) + 1)
                assert queue.pop_sum(n) == sum(cycles[:n])
                del cycles[:n]
            elif op < 0.9:
                n = rng.randrange(len(cycles) + 1)
                queue.drop(n)
                del cycles[:n]
            else:
                queue.shift(3)
                cycles = [c + 3 for c in cycles]
                back += 3
            assert len(queue) == len(cycles) and queue.to_list() == cycles
            if cycles:
                assert (queue.front(), queue.back()) == (cycles[0], cycles[-1])
                ks = sorted(rng.randrange(len(cycles)) for _ in range(4)) + [rng.randrange(len(cycles))]
                assert [queue.at(k) for k in ks] == [cycles[k] for k in ks]
                probe = rng.randrange(cycles[0] - 2, cycles[-1] + 3)
                assert queue.count_until(probe) == sum(1 for c in cycles if c <= probe)
