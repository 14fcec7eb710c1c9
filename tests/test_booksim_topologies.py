"""Agreement with BookSim2 on its fat-tree (`nca`) and dragonfly (`min`): zero-load latency within 2%
on every shared row whose routing netsim models, with the one model setting per topology of
scripts/booksim_topologies.py (which also prints the saturation throughput, minutes of runs)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "booksim_topologies.py"
spec = importlib.util.spec_from_file_location("booksim_topologies", SCRIPT)
agreement = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agreement)
ROWS = list(agreement.modelled_rows().itertuples())


def test_the_modelled_rows_are_the_nca_and_min_rows():
    assert sorted(row.config_id for row in ROWS) == sorted([
        "ft_k4n3_nca_v4_L4_uniform", "ft_k4n3_nca_v4_L1_uniform", "df_k2_min_v4_L4_uniform",
        "df_k2_min_v3_L4_baddragon_wtc0b64"])


@pytest.mark.parametrize("row", ROWS, ids=[row.config_id for row in ROWS])
def test_zero_load_latency_within_two_percent(row):
    assert agreement.zero_load_latency(row) == pytest.approx(row.T0, rel=0.02)
