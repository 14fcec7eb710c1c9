"""Link-utilization and run summaries as tables: what `netsim run` prints and `netsim report` reads.

links.csv's columns are the network layer's contract (`netsim.api.LINK_COLUMNS`).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from netsim.units import format_time

if TYPE_CHECKING:
    import pandas as pd

    from netsim.csv_text import Table


def json_default(value):
    """Make numpy scalars, tuples and sets JSON-serialisable in summary.json."""
    numpy = sys.modules.get("numpy")  # (a numpy scalar exists only once numpy is imported: not imported here)
    if numpy is not None and isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def finite(value):
    """`value` with every infinite or NaN float replaced by None, so the JSON is valid (null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def to_json(summary: dict) -> str:
    """summary.json's text: strict JSON (no Infinity or NaN), numpy values made plain."""
    return json.dumps(finite(json.loads(json.dumps(summary, default=json_default))), indent=2)




def max_utilization(links: Table) -> tuple[float, dict | None]:
    """The highest link utilization of a run and that link's row (the lowest id among equals);
    `links` is a DataFrame or plain columns (`Network.link_columns`)."""
    utilization, ids = list(links["utilization"]), list(links["link_id"])
    if not ids:
        return 0.0, None
    best = min(range(len(ids)), key=lambda i: (utilization[i] != utilization[i], -utilization[i], ids[i]))
    return float(utilization[best]), table_row(links, best)


def peak_interval_utilization(links: Table, timeseries: Table | None) -> tuple[float, dict | None]:
    """The highest utilization of one link over one sampling interval of a run's time series
    (`LinkSampler.columns` or `frame`: samples in time order, each with every link in id order),
    with that link's row and the interval's end `time_ns` (0 and None without a time series).
    Ties go to the lowest link id, then the earliest interval, as in `interval_utilization`."""
    count = len(links["link_id"])
    times = list(timeseries["time_ns"])[::count] if timeseries is not None and count else []
    busy = list(timeseries["busy_time_ns"]) if times else []
    best = None  # (utilization, link, interval's end)
    for k in range(1, len(times)):
        span = times[k] - times[k - 1]
        if not span > 0:
            continue
        before, after = busy[(k - 1) * count:k * count], busy[k * count:(k + 1) * count]
        shares = [(b - a) / span for a, b in zip(before, after)]
        top = max(shares)
        link = shares.index(top)
        if best is None or top > best[0] or (top == best[0] and link < best[1]):
            best = (top, link, times[k])
    if best is None:
        return 0.0, None
    utilization, link, end = best
    return float(utilization), {**table_row(links, link), "time_ns": float(end)}


def table_row(table: Table, i: int) -> dict:
    """Row `i` (by position) of a DataFrame or of plain columns, as {column: value}."""
    if isinstance(table, Mapping):
        return {name: values[i] for name, values in table.items()}
    return table.iloc[i].to_dict()


def oversubscription_warning(run_peak: tuple[float, dict | None], interval_peak: tuple[float, dict | None],
                             backend: str, alternatives: list[str]) -> str | None:
    """One line when a link carried more than it can (utilization above 1 over the run or over one
    sampling interval: `max_utilization`'s and `peak_interval_utilization`'s answers; only a backend
    that does not model congestion lets that happen), naming the link and the backends that model
    congestion; None otherwise."""
    peak, row = run_peak
    where = "over the run"
    if interval_peak[0] > max(peak, 1.0):
        peak, row = interval_peak
        where = f"in the sampling interval ending at {format_time(row['time_ns'])}"
    if row is None or not peak > 1.0:
        return None
    hint = f"; for times with contention use --backend {' or '.join(alternatives)}" if alternatives else ""
    return (f"link {row['src']}->{row['dst']} (id {row['link_id']}, dim {row['dim']}) is oversubscribed: "
            f"utilization {peak:.2f} > 1 {where}, because the {backend} backend lets messages share a link "
            f"without waiting, so its times leave congestion out{hint}")


def per_dimension_utilization(links: pd.DataFrame) -> pd.DataFrame:
    """Per dimension: links, bytes, mean and max utilization, imbalance (max / mean)."""
    import pandas as pd

    grouped = links.groupby("dim")
    frame = pd.DataFrame({
        "links": grouped.size(),
        "bytes": grouped["bytes"].sum(),
        "mean_utilization": grouped["utilization"].mean(),
        "max_utilization": grouped["utilization"].max(),
    }).reset_index()
    mean = frame["mean_utilization"].replace(0, math.nan)
    frame["imbalance"] = (frame["max_utilization"] / mean).fillna(0.0)
    return frame


def busiest_links(links: pd.DataFrame, top: int = 5) -> pd.DataFrame:
    """The `top` links by utilization (ties by link id, so the order is stable)."""
    ordered = links.sort_values(["utilization", "link_id"], ascending=[False, True])
    return ordered.head(top)[["link_id", "src", "dst", "kind", "dim", "bytes", "utilization"]]


def congested_ports(links: pd.DataFrame, top: int = 5) -> pd.DataFrame:
    """The `top` receiving input ports by credit-stall time, then mean occupancy (empty when the
    backend models no buffers)."""
    import pandas as pd

    columns = ["link_id", "src", "dst", "dim", "credit_stall_time_ns", "mean_buffer_flits", "max_vc_flits"]
    if "credit_stall_time_ns" not in links or links["credit_stall_time_ns"].isna().all():
        return pd.DataFrame(columns=columns)
    ordered = links.sort_values(["credit_stall_time_ns", "mean_buffer_flits", "link_id"],
                                ascending=[False, False, True])
    return ordered.head(top)[columns]


def interval_utilization(timeseries: pd.DataFrame) -> pd.DataFrame:
    """From link_timeseries.csv's cumulative counters: per link and sampling interval, the
    utilization (busy time / interval) of the interval from `start_ns` to `time_ns`."""
    frame = timeseries.sort_values(["link_id", "time_ns"]).copy()
    grouped = frame.groupby("link_id")
    span = grouped["time_ns"].diff()
    frame["start_ns"] = frame["time_ns"] - span
    frame["utilization"] = (grouped["busy_time_ns"].diff() / span).where(span > 0)
    return frame.dropna(subset=["utilization"])[["start_ns", "time_ns", "link_id", "utilization"]]
