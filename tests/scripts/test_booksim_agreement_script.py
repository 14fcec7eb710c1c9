"""scripts/booksim_agreement.py: its definitions match the shared BookSim2 rows' and BookSim's own,
and a run against the stored BookSim figures writes the table."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest

from netsim.app import traffic
from tests.garnet.test_booksim_agreement import ROWS, SUMMARY

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "booksim_agreement.py"
spec = importlib.util.spec_from_file_location("booksim_agreement", SCRIPT)
agreement = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # (its dataclass looks itself up)
spec.loader.exec_module(agreement)


@pytest.mark.parametrize("vcs, buffer_flits, packet_flits", [tuple(r) for r in SUMMARY.iloc[:, :3].values])
def test_saturation_load_is_the_shared_summarys(vcs, buffer_flits, packet_flits):
    """The load where latency reaches 3x zero-load, from the shared rows (a row marked saturated
    counts as past it), is the summary's saturation_at_3x_zero_load_offered."""
    rows = ROWS[(ROWS.num_vcs == vcs) & (ROWS.vc_buf_flits == buffer_flits) & (ROWS.packet_flits == packet_flits)]
    points = [{"rate": r.offered_flits_per_node_cycle, "latency": r.avg_packet_latency_cycles,
               "aborted": r.saturated == "yes"} for r in rows.itertuples() if r.offered_flits_per_node_cycle > 0.005]
    summary = SUMMARY[(SUMMARY.num_vcs == vcs) & (SUMMARY.vc_buf_flits == buffer_flits)
                      & (SUMMARY.packet_flits == packet_flits)].iloc[0]
    load = agreement.saturation_load(points, summary.zero_load_latency_cycles)
    # both rounded to 4 decimals (4-4-16: 0.34505 is 0.345 here, 0.3451 there)
    assert load == pytest.approx(summary.saturation_at_3x_zero_load_offered, abs=1.01e-4)


@pytest.mark.parametrize("topology", ["torus-8x8", "torus-4x4"])
def test_booksim_hotspot_weights_give_netsims_hotspot_distribution(topology):
    """BookSim's hotspot({{nodes},{weights}}) picks node i with weight_i / sum: netsim's hotspot
    (source included) picks node 0 with f + (1-f)/N and every other node with (1-f)/N."""
    case = agreement.Case(topology, "hotspot")
    text = agreement.booksim_traffic(case)
    assert text.startswith("hotspot({{") and text.endswith("}})")
    nodes, weights = (list(map(int, part.split(","))) for part in text[len("hotspot({{"):-len("}})")].split("},{"))
    assert nodes == list(range(case.npus))
    f, n = Fraction(traffic.HOTSPOT_FRACTION), case.npus
    assert Fraction(weights[0], sum(weights)) == f + (1 - f) / n
    assert all(Fraction(w, sum(weights)) == (1 - f) / n for w in weights[1:])


def test_bisection_brackets_saturation():
    """Loads 0.05 apart up to the first past saturation, then halvings of the interval holding it."""
    tried = []
    agreement.bracket_rates(lambda rate: tried.append(rate) or rate > 0.37)
    assert tried == [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.375, 0.3625, 0.3688]


def test_fairness_metrics():
    metrics = agreement.fairness_metrics([4, 1, 0.5, 0.5, 1])
    assert metrics["share_src0"] == pytest.approx(4 / 7)
    assert metrics["jain"] == pytest.approx(49 / (5 * (16 + 1 + 0.25 + 0.25 + 1)))
    assert metrics["local_to_through"] == pytest.approx(2.0)


def test_script_compares_with_the_stored_booksim_figures(tmp_path):
    """Without --booksim the script reads scripts/data/booksim2_agreement.csv, runs netsim and
    writes the table; the single-router switch with 4-flit packets agrees with BookSim."""
    case = "switch-16/uniform/vc4-buf4-pf4/tail-credit"
    result = subprocess.run([sys.executable, str(SCRIPT), "--only", case, "--out", str(tmp_path)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "agreement.csv")
    assert set(table["metric"]) == {"zero_load_latency", "half_sat_latency", "saturation_accepted",
                                    "saturation_accepted_steady"}
    assert (table["case"] == case).all() and (table["within"] == "yes").all()


def test_unknown_case_is_a_one_line_error(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), "--only", "no-such-case", "--out", str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "no case matches" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
