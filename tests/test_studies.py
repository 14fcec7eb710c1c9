"""The two studies in scripts/ run with --quick and write their tables, plots and headline."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def study(name, out):
    pytest.importorskip("matplotlib")
    result = subprocess.run([sys.executable, str(SCRIPTS / name), "--quick", "--out", str(out)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout, out / "quick"


def test_congestion_study_quick(tmp_path):
    stdout, folder = study("congestion_study.py", tmp_path)
    assert "largest congestion slowdown" in stdout and "saturation" in stdout
    slowdown = pd.read_csv(folder / "slowdown.csv")
    assert set(slowdown["topology"]) == {"torus", "switch", "hierarchical"}
    assert len(slowdown) == 3 * 5 * 2 and (slowdown["slowdown"] > 0.99).all()  # congestion never helps
    synth = pd.read_csv(folder / "synth.csv")
    assert set(synth["pattern"]) == {"uniform", "transpose", "tornado"}
    for png in ("slowdown.png", "latency_vs_load.png"):
        assert (folder / png).stat().st_size > 1000


def test_buffer_study_quick(tmp_path):
    stdout, folder = study("buffer_study.py", tmp_path)
    assert "all-reduce" in stdout and "saturation" in stdout
    frame = pd.read_csv(folder / "buffers.csv")
    assert len(frame) == 2 * 2 * 2 and set(frame["topology"]) == {"flat", "hierarchical"}
    deeper = frame.groupby(["network", "garnet.buffer_flits"])["collective_time_ns"].mean().unstack()
    assert (deeper[8] <= deeper[2]).all()  # deeper buffers never slow the all-reduce down
    assert (folder / "buffers.png").stat().st_size > 1000
