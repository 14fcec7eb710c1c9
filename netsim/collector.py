"""How often netsim lets Python's cyclic garbage collector run: rarely.

A run holds up to millions of live events, process generators and packet-core objects, none of
them garbage; with Python's default thresholds (a collection of the youngest generation every 700
allocations) the collector rescans them so often that it took 45% of a 1024-NPU analytical run
(12.6 s vs 7.1 s, identical results), and importing netsim alone ran 32 collections (9 ms, a tenth
of a small run's start-up). Cycles are still collected, just less often.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager

RARE_COLLECTIONS = 100_000  # allocations between collections of the youngest generation


def collect_rarely() -> None:
    """From now on, collect the youngest generation every RARE_COLLECTIONS allocations (the `netsim`
    command, for all of its run)."""
    gc.set_threshold(RARE_COLLECTIONS, *gc.get_threshold()[1:])


@contextmanager
def rare_garbage_collection(first_generation: int = RARE_COLLECTIONS):
    """Collect rarely within the block (a run, or building one), then restore the settings."""
    saved = gc.get_threshold()
    gc.set_threshold(first_generation, saved[1], saved[2])
    try:
        yield
    finally:
        gc.set_threshold(*saved)
