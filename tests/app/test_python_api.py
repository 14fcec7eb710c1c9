"""The Python API (netsim.run / collective / synth / load) gives what the command line gives, keeps
`import netsim` light, and the example in examples/ runs."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import netsim
from tests.app.test_cli import netsim as netsim_cli

ROOT = Path(__file__).resolve().parents[2]


def test_import_netsim_loads_no_simulation_machinery():
    code = "import sys, netsim; print(sorted(m for m in ('pandas', 'numpy', 'simpy', 'networkx', 'rich') " \
           "if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_a_collective_from_python_is_the_command_line_one(tmp_path):
    result = netsim.collective("all-reduce", "256KiB", network="torus-4x4", backend="garnet",
                               set={"garnet.vcs": 4, "endpoint-delay": "20ns"}, seed=3, out=tmp_path / "py")
    shown = netsim_cli("collective", "all-reduce", "--size", "256KiB", "--network", "torus-4x4", "--backend",
                       "garnet", "--set", "garnet.vcs=4", "--set", "endpoint-delay=20ns", "--seed", "3", "--json",
                       "--out", str(tmp_path / "cli"), cwd=tmp_path)
    cli = json.loads(shown.stdout)
    for key in ("collective_time_ns", "busbw_GBps", "bytes_sent_total", "max_link_utilization", "events"):
        assert result.summary[key] == cli[key]
    assert list(result.tables["links"]["bytes"]) == list(netsim.load(tmp_path / "cli").tables["links"]["bytes"])
    assert netsim.load(tmp_path / "py").summary["collective_time_ns"] == cli["collective_time_ns"]


def test_run_and_synth_return_the_summary_and_the_tables():
    training = netsim.run(network="ring-8", workload="microAllReduce", passes=2)
    assert training.summary["passes"] == 2 and set(training.tables) >= {"end_to_end", "detailed", "links"}
    traffic = netsim.synth("uniform", rate=0.1, network="torus-8x8-noc", cycles=400)
    assert 0.05 < traffic.summary["accepted_load"] < 0.15 and len(traffic.tables["packet_latency"]) > 0


def test_run_takes_chakra_traces_and_their_communicator_groups(tmp_path):
    traces = ROOT / "tests" / "data" / "chakra"
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"1": list(range(8))}))
    trace = netsim.run(network=traces / "Ring_8npus.yml", workload=traces / "all_reduce", comm_groups=groups)
    alone = netsim.collective("all-reduce", "1MiB", network=traces / "Ring_8npus.yml")
    assert trace.summary["workload"]["format"] == "chakra" and set(trace.tables) >= {"nodes", "links"}
    assert trace.summary["end_to_end_time_ns"] == alone.summary["collective_time_ns"]
    with pytest.raises(netsim.ConfigError, match="--memory applies to Chakra traces"):
        netsim.run(network="ring-8", workload="microAllReduce", memory=groups)


def test_bad_input_raises_the_one_line_error():
    with pytest.raises(netsim.ConfigError, match=r"^--size: expected a size") as info:
        netsim.collective("all-reduce", "64 parsecs")
    assert "\n" not in str(info.value)
    with pytest.raises(netsim.ConfigError, match=r"key 'garnet.vcss': unknown key \(did you mean 'vcs'\?\)"):
        netsim.collective("all-reduce", "1KiB", set={"garnet.vcss": 2})
    with pytest.raises(netsim.ConfigError, match=r"^--seed: expected a whole number >= 0, got -3$"):
        netsim.collective("all-reduce", "1KiB", seed=-3)  # as the command line refuses it


def test_the_notebook_example_runs():
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "notebook.py")], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "iteration" in done.stdout and "busbw" in done.stdout and "error: --size" in done.stdout
