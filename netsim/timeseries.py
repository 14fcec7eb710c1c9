"""Per-link counters sampled during a run, for utilization-over-time plots (link_timeseries.csv).

Samples are taken at simulated-time boundaries, so the series depends only on the simulation,
never on wall time. The interval starts small and doubles (dropping every other sample) whenever
`2 * keep` samples are held, so a run of any length keeps between `keep` and `2 * keep` samples
and the cost of sampling stays a small, bounded share of the run.
"""

from __future__ import annotations

import pandas as pd

TIMESERIES_COLUMNS = ("time_ns", "link_id", "bytes", "busy_time_ns")  # cumulative counters at time_ns


class LinkSampler:
    """Keeps (time_ns, bytes per link, busy ns per link) snapshots; see the module docstring."""

    def __init__(self, keep: int = 50, first_interval_ns: float = 100.0):
        self.keep = keep
        self.interval = first_interval_ns
        self.next_at = 0.0
        self.samples: list[tuple[float, list, list]] = []

    def maybe_sample(self, network) -> None:
        """Sample if simulated time has reached the next boundary."""
        now = network.env.now
        if now >= self.next_at:
            self.sample(network)

    def sample(self, network) -> None:
        """Sample now (also called once at the end of a run, so the last interval is complete)."""
        now = network.env.now
        if self.samples and self.samples[-1][0] == now:
            self.samples.pop()
        link_bytes, busy = network.link_counters()
        self.samples.append((now, link_bytes, busy))
        self.next_at = now + self.interval
        if len(self.samples) >= 2 * self.keep:
            self.samples = self.samples[::2]
            self.interval *= 2
        network.next_counter_read = self.next_at

    def frame(self) -> pd.DataFrame:
        """Long format, one row per sample and link: TIMESERIES_COLUMNS."""
        rows = [(t, link, b, busy) for t, link_bytes, busy_ns in self.samples
                for link, (b, busy) in enumerate(zip(link_bytes, busy_ns))]
        return pd.DataFrame(rows, columns=list(TIMESERIES_COLUMNS))
