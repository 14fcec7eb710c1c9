"""The two studies in scripts/ and the method behind their saturation answers: stable, monotone,
honest about bounds, and headlines read from the tables they print beside."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from netsim.network_config import load_network
from netsim.app.saturation import past_saturation, saturation
from netsim.app.traffic import run_synth

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def study(name, out):
    pytest.importorskip("matplotlib")
    result = subprocess.run([sys.executable, str(SCRIPTS / name), "--quick", "--out", str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result.stdout, out / "quick"


def script(name):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def point(rate, offered, accepted, packets=200, latency=60.0, drained=True):
    return {"rate": rate, "offered_load": offered, "accepted_load": accepted, "packets": packets,
            "avg_packet_latency_cycles": latency, "drained": drained}


def test_counting_noise_is_not_saturation_but_a_real_shortfall_is():
    """500 cycles on switch-16 judged offered 0.107, accepted 0.095 saturated: 11% short on ~200
    packets is within three standard deviations of a Bernoulli count (21%)."""
    assert not past_saturation(point(0.1, 0.107, 0.095, packets=200), 58.0)
    assert past_saturation(point(0.1, 0.107, 0.095, packets=20000), 58.0)  # the same shortfall, measured long
    assert past_saturation(point(0.3, 0.3, 0.3, latency=200.0), 58.0)  # latency past 3x zero-load
    assert past_saturation(point(0.3, 0.3, 0.3, drained=False), 58.0)


def test_brackets_are_bounds_when_the_loads_do_not_reach_saturation_or_start_past_it():
    kept_up = [point(r, r, r) for r in (0.1, 0.2, 0.3)]
    assert saturation(kept_up, 60).text() == "> 0.3"
    all_past = [point(r, r, r, latency=500.0) for r in (0.1, 0.2)]
    low_high = saturation(all_past, 60)
    assert (low_high.low, low_high.high, low_high.text()) == (None, 0.1, "< 0.1")  # not a made-up 0.0
    noisy = [point(0.1, 0.1, 0.1), point(0.2, 0.2, 0.2, latency=400.0), point(0.3, 0.3, 0.3)]
    assert saturation(noisy, 60).text() == "0.1..0.2"  # a lucky point above the first saturated one is no answer


def test_quick_saturation_is_stable_across_seeds():
    """The quick method (2000-cycle windows, the buffer study's loads) gives one bracket whatever the seed."""
    buffer_study = script("buffer_study")
    config = load_network("switch-16", [(["garnet", "buffer_flits"], 8)])
    brackets = set()
    for seed in (1, 2, 3):
        points = [{**run_synth(config, "uniform", rate, 4, 2000, seed), "rate": rate}
                  for rate in [buffer_study.ZERO_LOAD] + buffer_study.loads(quick=True)]
        zero = points[0]["avg_packet_latency_cycles"]
        brackets.add(saturation(points[1:], zero).text())
    assert len(brackets) == 1, brackets


def test_buffer_study_quick(tmp_path):
    stdout, folder = study("buffer_study.py", tmp_path)
    frame = pd.read_csv(folder / "buffers.csv")
    assert len(frame) == 2 * 2 * 2 and set(frame["topology"]) == {"flat", "hierarchical"}
    deeper = frame.groupby(["network", "garnet.buffer_flits"])["collective_time_ns"].mean().unstack()
    assert (deeper[8] <= deeper[2]).all()  # deeper buffers never slow the all-reduce down
    assert frame["saturation"].notna().all() and not (frame["saturation_low"] == 0).any()
    for (network, vcs), group in frame.groupby(["network", "garnet.vcs"]):  # monotone in buffer depth
        ordered = group.sort_values("garnet.buffer_flits")["saturation_low"].fillna(0).to_list()
        assert ordered == sorted(ordered), (network, vcs, ordered)
    for (network, depth), group in frame.groupby(["network", "garnet.buffer_flits"]):  # and in VCs
        ordered = group.sort_values("garnet.vcs")["saturation_low"].fillna(0).to_list()
        assert ordered == sorted(ordered), (network, depth, ordered)
    for line, (network, part) in zip(stdout.splitlines(), frame.groupby("network", sort=False)):
        assert line.split(":")[0].endswith(network)
        lowest = part.loc[part["saturation_low"].fillna(-1).idxmin(), "saturation"]
        highest = part.loc[part["saturation_low"].fillna(-1).idxmax(), "saturation"]
        assert f"saturation {lowest} (" in line and f"to {highest} (" in line  # the headline is the table's
    assert (folder / "buffers.png").stat().st_size > 1000


def test_congestion_study_quick_tells_latency_from_congestion(tmp_path):
    stdout, folder = study("congestion_study.py", tmp_path)
    slowdown = pd.read_csv(folder / "slowdown.csv")
    assert set(slowdown["topology"]) == {"torus", "switch", "hierarchical"}
    assert len(slowdown) == 3 * 5 * 3 and (slowdown["slowdown"] > 0.99).all()  # the packet model never beats it
    assert set(slowdown["regime"]) == {"latency-bound", "bandwidth-bound"}
    congestion = pd.read_csv(folder / "congestion.csv")
    rings = congestion[congestion["algorithm"] == "ring"].dropna(subset=["congestion_slowdown"])
    assert len(rings) and rings["congestion_slowdown"].between(0.9, 1.5).all()  # a ring step has its links alone
    lines = stdout.splitlines()
    judged = congestion.dropna(subset=["congestion_slowdown"])
    assert f"largest {judged['congestion_slowdown'].max():.2f}x" in lines[0]
    latency = congestion[congestion["smallest_regime"] == "latency-bound"]["latency_slowdown"]
    assert f"{latency.min():.2f}x..{latency.max():.2f}x" in lines[1] and "not congestion" in lines[1]
    saturation_table = pd.read_csv(folder / "saturation.csv")
    assert all(f"{r.network} {r.pattern} {r.saturation} ({r.ideal_load:.4g})" in lines[2]
               for r in saturation_table.itertuples())
    # every case bracketed by two loads measured ("> 0.6" for every case before), at most its bound x 1.2
    assert saturation_table[["saturation_low", "saturation_high"]].notna().all().all(), saturation_table
    assert (saturation_table["saturation_high"] <= 1.2 * saturation_table["ideal_load"] + 1e-3).all()
    for png in ("slowdown.png", "latency_vs_load.png"):
        assert (folder / png).stat().st_size > 1000


def test_routing_study_summary_bands_ecmp_seeds_against_adaptive():
    routing_study = script("routing_study")
    rows = [("ecmp", 0, 300.0, 1.9), ("ecmp", 1, 200.0, 1.1), ("ecmp", 2, 250.0, 1.5),
            ("spray", 0, 210.0, 1.0), ("adaptive", 0, 200.0, 1.05)]
    points = pd.DataFrame([{"network": "rail-128", "kind": "all-to-all", "algorithm": "direct", "size": 2**20,
                            "routing": routing, "study_seed": seed, "seed": seed, "collective_time_ns": time,
                            "imbalance": imbalance} for routing, seed, time, imbalance in rows])
    table = routing_study.summarize(points).set_index("routing")
    assert table.loc["ecmp", ["time_ns", "time_min_ns", "time_max_ns", "seeds"]].tolist() == [250.0, 200.0, 300.0, 3]
    assert table.loc["ecmp", ["over_adaptive_min", "over_adaptive", "over_adaptive_max"]].tolist() == [1.0, 1.25, 1.5]
    assert table.loc["spray", "over_adaptive"] == pytest.approx(1.05)
    line = routing_study.headline(table.reset_index())
    assert "ECMP's worst seed 1.50x adaptive's time (all-to-all direct 1MiB; median seed 1.25x)" in line
    assert "ecmp 1.50, spray 1.00, adaptive 1.05" in line
