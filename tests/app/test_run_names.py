"""A run is named by what ran: --set overrides, --backend, --algorithm and the seed change its name
and default folder, and an existing run folder is not replaced without a word (issue 29, item 1)."""

import json
import subprocess

from tests.helpers import netsim_command


def netsim(*args, cwd):
    return subprocess.run([*netsim_command(), *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_topo_names_the_overridden_network(tmp_path):
    result = netsim("topo", "fat-tree-32", "--set", "topology.leaves=8", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["npus"] == 64 and summary["name"] == "fat-tree-32+leaves=8"


def test_runs_with_different_settings_get_different_folders(tmp_path):
    runs = [("--set", "topology.dims=[2,4]"), ("--set", "topology.dims=[4,2]"), ("--algorithm", "direct"),
            ("--backend", "congestion-aware"), ("--set", "endpoint-delay=20"), ("--seed", "3"), ()]
    names = []
    for extra in runs:
        result = netsim("collective", "all-reduce", "--size", "4KiB", "--network", "torus-4x4", "--json", *extra,
                        cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "earlier run" not in result.stderr
        names.append(json.loads(result.stdout)["name"])
    assert names[0] == "all-reduce-4096B-torus-4x4+dims=2x4"
    assert names[2] == "all-reduce-4096B-torus-4x4+algorithm=direct"
    assert names[-1] == "all-reduce-4096B-torus-4x4"
    assert len(set(names)) == len(runs)
    assert len(list((tmp_path / "netsim-out").iterdir())) == len(runs)


def test_a_long_list_of_overrides_is_named_by_a_hash(tmp_path):
    result = netsim("topo", "torus-4x4", "--json", "--set", "topology.bandwidth=100GB/s", "--set",
                    "topology.latency=100ns", "--set", "garnet.vcs=2", "--set", "garnet.buffer_flits=8",
                    "--set", "garnet.router_latency=2", cwd=tmp_path)
    name = json.loads(result.stdout)["name"]
    assert name.startswith("torus-4x4+set-") and len(name) < 40


def test_replacing_a_run_folder_is_said(tmp_path):
    args = ("collective", "all-reduce", "--size", "4KiB", "--network", "ring-8")
    first = netsim(*args, cwd=tmp_path)
    assert first.returncode == 0 and "earlier run" not in first.stderr
    second = netsim(*args, cwd=tmp_path)
    assert second.returncode == 0
    assert "held an earlier run; replaced it" in second.stderr
