"""Agreement with BookSim2 on its fat-tree (`nca`, `anca`), dragonfly (`min`, `ugal`), torus
(`min_adapt`) and mesh (`dim_order`, `min_adapt`, `romm`, `valiant`, `xy_yx`): zero-load latency
within 2% and saturation throughput within 10% on every shared row (seconds each, the fat-tree's
about 10, the dragonfly's, past BookSim's 30000 cycles of warm-up, about 20;
scripts/booksim_topologies.py prints them), with the one model
setting per topology and routing of that script (BookSim's router model,
`garnet.allocator = "booksim"`, on every row)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "booksim_topologies.py"
spec = importlib.util.spec_from_file_location("booksim_topologies", SCRIPT)
agreement = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agreement)
ROWS = list(agreement.modelled_rows().itertuples())


def test_every_shared_row_is_modelled():
    assert sorted(row.config_id for row in ROWS) == sorted(agreement.SUMMARY.config_id)


@pytest.mark.parametrize("row", ROWS, ids=[row.config_id for row in ROWS])
def test_zero_load_latency_within_two_percent(row):
    assert agreement.zero_load_latency(row) == pytest.approx(row.T0, rel=0.02)


@pytest.mark.parametrize("row", ROWS, ids=[row.config_id for row in ROWS])
def test_saturation_throughput_within_ten_percent(row):
    assert agreement.saturation_accepted(row) == pytest.approx(row.overload_accepted, rel=0.10)
