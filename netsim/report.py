"""Link-utilization and run summaries as tables: what `netsim run` prints and `netsim report` reads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from netsim.errors import ConfigError


def json_default(value):
    """Make numpy scalars, tuples and sets JSON-serialisable in summary.json."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def per_dimension_utilization(links: pd.DataFrame) -> pd.DataFrame:
    """Per dimension: links, bytes, mean and max utilization, imbalance (max / mean)."""
    grouped = links.groupby("dim")
    frame = pd.DataFrame({
        "links": grouped.size(),
        "bytes": grouped["bytes"].sum(),
        "mean_utilization": grouped["utilization"].mean(),
        "max_utilization": grouped["utilization"].max(),
    }).reset_index()
    mean = frame["mean_utilization"].replace(0, np.nan)
    frame["imbalance"] = (frame["max_utilization"] / mean).fillna(0.0)
    return frame


def busiest_links(links: pd.DataFrame, top: int = 5) -> pd.DataFrame:
    """The `top` links by utilization (ties by link id, so the order is stable)."""
    ordered = links.sort_values(["utilization", "link_id"], ascending=[False, True])
    return ordered.head(top)[["link_id", "src", "dst", "kind", "dim", "bytes", "utilization"]]


def load_output(out_dir: Path) -> tuple[dict, dict[str, pd.DataFrame]]:
    """Read a run's output folder back: summary.json and its CSV tables."""
    summary_path = out_dir / "summary.json"
    if not summary_path.is_file():
        raise ConfigError(f"{out_dir}: not a netsim output folder (no summary.json)")
    try:
        summary = json.loads(summary_path.read_text())
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{summary_path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    tables = {path.stem: pd.read_csv(path) for path in sorted(out_dir.glob("*.csv"))}
    return summary, tables
