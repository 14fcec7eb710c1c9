"""What a small run imports before its first simulated event (issue 25's start-up: under 0.3 s on a
small network; scripts/bench_startup.py prints the figures). pandas and matplotlib are imported
only where a command needs them (pandas for the reports, after the simulation), and rich only for
something shown (not with --quiet). networkx neither (a topology is built without it; `Topology.graph`
builds the networkx DiGraph on first use), nor numpy (the reports' and the analytical backend's
symmetric collectives' per-link counts: imported where those begin)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pandas", "rich", "matplotlib", "networkx", "numpy")
CHILD = f"""
import os, sys
import simpy.core
def first_step(self):
    print("LOADED", *[name for name in {HEAVY!r} if name in sys.modules], file=sys.stderr, flush=True)
    os._exit(0)
simpy.core.Environment.step = first_step
from netsim.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("argv", [
    ["synth", "--network", "torus-4x4", "--pattern", "uniform", "--rate", "0.1", "--cycles", "1000"],
    ["synth", "--network", "dragonfly-72", "--pattern", "uniform", "--rate", "0.1", "--cycles", "100"],
    ["collective", "all-reduce", "--size", "1KiB", "--network", "ring-8"],
    ["collective", "all-reduce", "--size", "1KiB", "--network", "ring-8", "--backend", "garnet"],
], ids=["synth", "synth-dragonfly", "collective", "collective-packet"])
def test_a_small_run_starts_without_heavy_imports(tmp_path, argv):
    """They were all imported (but matplotlib) before the first cycle: 1.2-1.3 s on a busy machine."""
    import netsim

    tested = str(Path(netsim.__file__).parents[1])  # the checkout under test, whatever is installed
    done = subprocess.run([sys.executable, "-c", CHILD, *argv, "--quiet", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": tested},
                          timeout=120)
    loaded = [line for line in done.stderr.splitlines() if line.startswith("LOADED")]
    assert done.returncode == 0 and loaded == ["LOADED"], done.stderr


WHOLE_RUN = f"""
import sys
from netsim.__main__ import main
status = main(sys.argv[1:])
print("LOADED", *[name for name in {HEAVY!r} if name in sys.modules], file=sys.stderr, flush=True)
sys.exit(status)
"""


def test_a_synth_run_writes_its_reports_without_pandas_or_numpy(tmp_path):
    """Importing them took a third of a small synth run (issue 25's 8x8 torus at load 0.01): its
    tables are plain columns, written by netsim.csv_text (which writes what pandas would)."""
    import netsim

    tested = str(Path(netsim.__file__).parents[1])
    argv = ["synth", "--network", "torus-4x4", "--pattern", "uniform", "--rate", "0.1", "--cycles", "500"]
    done = subprocess.run([sys.executable, "-c", WHOLE_RUN, *argv, "--quiet", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": tested},
                          timeout=120)
    loaded = [line for line in done.stderr.splitlines() if line.startswith("LOADED")]
    assert done.returncode == 0 and loaded == ["LOADED"], done.stderr
    assert {"links.csv", "link_timeseries.csv", "packet_latency.csv", "summary.json"} <= {
        path.name for path in (tmp_path / "out").iterdir()}
