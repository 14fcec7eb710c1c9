"""Per-link counters sampled during a run, for utilization-over-time plots (link_timeseries.csv).

Samples are taken at simulated-time boundaries, so the series depends only on the simulation,
never on wall time. The interval starts small and doubles (dropping every other sample) whenever
`2 * keep` samples are held, so a run of any length keeps between `keep` and `2 * keep` samples
and the cost of sampling stays a small, bounded share of the run. On a network with many links
`keep` is lowered so the file stays under `ROW_BUDGET` rows (past 50,000 links `MIN_KEEP` samples
take more): at 4096 NPUs a row per link and sample is what writing the reports costs most.
Samples are held as Python arrays (8 bytes a value, as numpy's): numpy is imported by the reports,
not at a run's start (scripts/bench_startup.py).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

TIMESERIES_COLUMNS = ("time_ns", "link_id", "bytes", "busy_time_ns")  # cumulative counters at time_ns
ROW_BUDGET = 1_000_000  # most rows a run's time series holds (unless MIN_KEEP samples need more)
MIN_KEEP = 10


class LinkSampler:
    """Keeps (time_ns, bytes per link, busy ns per link) snapshots; see the module docstring."""

    def __init__(self, keep: int = 50, first_interval_ns: float = 100.0, row_budget: int = ROW_BUDGET):
        self.keep = keep
        self.row_budget = row_budget
        self.interval = first_interval_ns
        self.next_at = 0.0
        self.samples: list[tuple[float, Sequence, Sequence]] = []  # (time, bytes, busy ns) per link

    def maybe_sample(self, network) -> None:
        """Sample if simulated time has reached the next boundary, or the next event would pass it
        on a network whose counters are exact between events (`counters_any_time`: Network.run asks
        then, so a backend with sparse events keeps the cadence)."""
        now = network.env.now
        if now >= self.next_at or (network.counters_any_time and network.env.peek() > self.next_at):
            self.sample(network)

    def sample(self, network) -> None:
        """Sample now (also called once at the end of a run, so the last interval is complete)."""
        now = network.env.now
        if self.samples and self.samples[-1][0] == now:
            self.samples.pop()
        link_bytes, busy = network.link_counters()
        if not self.samples and len(link_bytes):  # the first: the network's size sets how many to keep
            self.keep = max(MIN_KEEP, min(self.keep, self.row_budget // (2 * len(link_bytes))))
        self.samples.append((now, _packed(link_bytes), _packed(busy)))
        self.next_at = now + self.interval
        if len(self.samples) >= 2 * self.keep:
            self.samples = self.samples[::2]
            self.interval *= 2
        network.next_counter_read = self.next_at

    def columns(self) -> dict[str, Sequence]:
        """Long format, one row per sample and link (samples in time order, links by id):
        TIMESERIES_COLUMNS, as Python arrays (numpy's when a backend's samples are numpy arrays)."""
        if not self.samples:
            return {name: [] for name in TIMESERIES_COLUMNS}
        links = len(self.samples[0][1])
        times, link_bytes, busy = zip(*self.samples)
        times = _packed(list(times))
        return {
            "time_ns": array(times.typecode, [time for time in times for _ in range(links)]),
            "link_id": array("q", range(links)) * len(times),
            "bytes": _concatenated(link_bytes),
            "busy_time_ns": _concatenated(busy),
        }

    def frame(self) -> pd.DataFrame:
        """`columns` as a DataFrame."""
        import pandas as pd

        from netsim.csv_text import as_frame

        if not self.samples:
            return pd.DataFrame(columns=list(TIMESERIES_COLUMNS))
        return as_frame(self.columns())


def _concatenated(samples: Sequence[Sequence]) -> Sequence:
    """Samples (`_packed`'s arrays) end to end, typed as numpy.concatenate would type them."""
    if not all(isinstance(sample, array) for sample in samples):
        import numpy as np

        return np.concatenate([np.asarray(sample) for sample in samples])
    typecode = "q" if all(sample.typecode == "q" for sample in samples) else "d"
    joined = array(typecode)
    for sample in samples:
        joined.extend(sample if sample.typecode == typecode else array(typecode, sample))
    return joined


def _packed(values: list | np.ndarray) -> Sequence:
    """A sample's counters held as numpy.asarray would hold them (64-bit integers if every value is
    an int, else 64-bit floats), without numpy; a backend's numpy array is kept as it is."""
    if not isinstance(values, list):
        return values
    return array("q" if all(type(value) is int for value in values) else "d", values)
