"""Smaller things a new user tripped over in a buffer-size study (issue 29, item 6)."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from netsim.network_config import load_network
from netsim.app.progress import RunMonitor
from netsim.app.traffic import SynthRun
from tests.helpers import netsim_command

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def netsim(*args, cwd):
    return subprocess.run([*netsim_command(), *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_synth_progress_says_it_is_draining_and_counts_packets_not_messages():
    run = SynthRun(load_network("torus-8x8-noc"), "uniform", 0.3, 4, 2000, 1, None)
    fraction, text = run.progress()
    assert fraction == 0 and "cycle 0 of 2,400 (warming up)" in text
    run.execute()
    fraction, text = run.progress()
    assert fraction < 1 and text.startswith("draining: ") and "of 2,400" not in text
    assert "packets in the network" in text
    monitor = RunMonitor()
    monitor.restart("synth", lambda net: run.progress(), messages=False)
    assert monitor.snapshot(run.network).in_flight is None  # (synthetic packets bypass the message count)


def test_verify_is_said_on_screen(tmp_path):
    result = netsim("collective", "all-reduce", "--size", "4KiB", "--network", "ring-8", "--verify", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "verified" in result.stdout and "every NPU's result checked" in result.stdout


def test_report_metric_writes_its_own_plot(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "s.toml").write_text('[base]\ncommand = "collective"\nkind = "all-reduce"\nnetwork = "ring-8"\n'
                                     '[grid]\nsize = ["4KiB", "8KiB", "16KiB"]\n')
    assert netsim("sweep", "s.toml", "--jobs", "1", "--quiet", cwd=tmp_path).returncode == 0
    assert netsim("report", "s.results.jsonl", "--plot", "--quiet", cwd=tmp_path).returncode == 0
    default = (tmp_path / "s.results.png").read_bytes()
    result = netsim("report", "s.results.jsonl", "--plot", "--metric", "busbw_GBps", "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "s.results.busbw_GBps.png").is_file()
    assert (tmp_path / "s.results.png").read_bytes() == default  # the default plot is not written over


def test_a_doubling_sweep_is_plotted_on_a_log_2_axis():
    plt = pytest.importorskip("matplotlib.pyplot")
    from netsim.app import plots

    frame = pd.DataFrame({"status": "ok", "garnet.buffer_flits": [2, 4, 8, 16, 32] * 2,
                          "kind": ["all-reduce"] * 5 + ["all-to-all"] * 5,
                          "collective_time_ns": [80.0, 40, 20, 10, 9, 90, 45, 22, 11, 10]})
    figure = plots.study_plot(plt, frame, ["garnet.buffer_flits", "kind"], "collective_time_ns", "t")
    (ax,) = figure.axes
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["2", "4", "8", "16", "32"]
    plt.close(figure)


def test_congestion_aware_ring_through_a_switch_warns_of_store_and_forward(tmp_path):
    args = ("collective", "all-reduce", "--size", "64KiB", "--backend", "congestion-aware", "--json")
    switched = json.loads(netsim(*args, "--network", "fat-tree-32", cwd=tmp_path).stdout)
    assert any("stores and forwards whole messages" in w and "2x" in w for w in switched["warnings"])
    torus = json.loads(netsim(*args, "--network", "torus-4x4", cwd=tmp_path).stdout)
    assert not any("stores and forwards" in w for w in torus["warnings"])
    direct = json.loads(netsim(*args, "--network", "fat-tree-32", "--algorithm", "direct", cwd=tmp_path).stdout)
    assert not any("stores and forwards" in w for w in direct["warnings"])


def test_bucket_study_has_a_backend_and_writes_under_results():
    result = subprocess.run([sys.executable, str(SCRIPTS / "bucket_study.py"), "--help"], capture_output=True,
                            text=True, timeout=120)
    assert "--backend" in result.stdout and "results/bucket_study" in result.stdout


def test_buffer_study_draws_coinciding_vc_lines_distinctly():
    import importlib.util

    spec = importlib.util.spec_from_file_location("buffer_study", SCRIPTS / "buffer_study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    styles = [module.vc_style(index) for index in range(3)]
    assert len({(s["marker"], s["markersize"], s["fillstyle"]) for s in styles}) == 3
    assert styles[0]["markersize"] > styles[1]["markersize"] and styles[1]["fillstyle"] == "none"
