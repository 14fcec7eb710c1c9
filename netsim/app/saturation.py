"""Saturation throughput from a latency/load curve, with a rule for how sure a point is.

A measured load is *past saturation* when the network did not keep up with it: its measured
packets did not all arrive (not drained), its average latency is more than LATENCY_FACTOR times
the zero-load latency (BookSim's criterion), or its accepted load fell short of the offered load by
more than counting noise allows: max(MIN_SHORTFALL, 3 / sqrt(packets measured)), three standard
deviations of a Bernoulli count. A short window's noise alone no longer reads as saturation.

The saturation load is bracketed by the loads measured, in increasing order: `low` is the highest
load below the first load past saturation (so one noisy point above it cannot raise the answer,
and an answer never rises when a load is added below it), `high` that first load. When even the
lowest load was past saturation the answer is "< high" (low is None); when no load was, "> low"
(high is None): bounds, not a made-up 0 or a maximum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

LATENCY_FACTOR = 3.0
MIN_SHORTFALL = 0.05


def past_saturation(point: dict, zero_load_latency: float) -> bool:
    """Whether a synth point (a `netsim synth` summary) shows a load the network did not keep up with."""
    allowed = max(MIN_SHORTFALL, 3.0 / math.sqrt(max(1, point["packets"])))
    return (not point["drained"] or point["avg_packet_latency_cycles"] > LATENCY_FACTOR * zero_load_latency
            or point["accepted_load"] < (1.0 - allowed) * point["offered_load"])


@dataclass(frozen=True)
class Saturation:
    """The saturation load between two measured loads (offered, flits/node/cycle); see the module docstring."""

    low: float | None  # the highest load kept up with below the first one past saturation
    high: float | None  # the first load past saturation

    def text(self) -> str:
        if self.low is None and self.high is None:
            return "n/a"
        if self.low is None:
            return f"< {self.high:g}"
        if self.high is None:
            return f"> {self.low:g}"
        return f"{self.low:g}..{self.high:g}"


def saturation(points: list[dict], zero_load_latency: float, load_key: str = "rate") -> Saturation:
    """The bracket of `points` (synth summaries at several loads, `load_key` naming each one's
    load) around the saturation load."""
    return bracket(points, lambda point: past_saturation(point, zero_load_latency), load_key)


def bracket(points: list[dict], is_past: Callable[[dict], bool], load_key: str = "rate") -> Saturation:
    """The bracket of `points` around the saturation load, `is_past(point)` telling a point past
    saturation (`netsim synth --sweep` has flagged each already)."""
    ordered = sorted(points, key=lambda point: point[load_key])
    low = None
    for point in ordered:
        if is_past(point):
            return Saturation(low, point[load_key])
        low = point[load_key]
    return Saturation(low, None)


def saturation_frame(synthetic, keys: list[str], zero_load_rate: float):
    """Per configuration (the columns `keys`) of a swept synth frame (one row per point, with
    `rate`): its saturation bracket, the `zero_load_rate` point's latency standing for zero-load latency."""
    import pandas as pd

    rows = []
    for key, group in synthetic.groupby(keys):
        zero = group.loc[group["rate"] == zero_load_rate, "avg_packet_latency_cycles"].iloc[0]
        bracket = saturation(group[group["rate"] != zero_load_rate].to_dict("records"), zero)
        rows.append({**dict(zip(keys, key)), "saturation_low": bracket.low, "saturation_high": bracket.high,
                     "saturation": bracket.text()})
    return pd.DataFrame(rows)
