"""The packet backend's settings in force are shown (live view header, `netsim topo --backend garnet`,
summary.json), a bad `garnet.` key lists the valid ones, and `netsim list --keys` prints every key
from its declaration (issue 29, item 4)."""

import json
import subprocess

import pandas as pd
import pytest

from netsim.app.parser import build_parser
from netsim.app.scenarios import run_scenario
from netsim.app.progress import RunMonitor
from tests.helpers import netsim_command


def netsim(*args, cwd):
    return subprocess.run([*netsim_command(), *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_topo_shows_the_packet_settings_of_the_datacenter_fat_tree(tmp_path):
    result = netsim("topo", "fat-tree-32", "--backend", "garnet", "--set", "topology.leaves=8", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    settings = json.loads(result.stdout)["packet_settings"]
    # 50 GB/s at 0.05 GHz: 1000-byte flits; 500 ns links: 25 cycles; round trip 2 * 25 + 1 + 1 = 52 cycles
    assert settings["flit_bytes"] == 1000 and settings["clock_ghz"] == 0.05
    assert settings["link_latency_cycles"] == 25 and settings["credit_round_trip_cycles"] == 52
    assert settings["buffer_flits"] == 52 and settings["vcs"] == 4
    assert settings["packet_flits"] == 104 and settings["packet_bytes"] == 104_000
    table = netsim("topo", "fat-tree-32", "--backend", "garnet", cwd=tmp_path).stdout
    assert "packet_bytes" in table and "104000" in table
    assert "packet_bytes" not in netsim("topo", "fat-tree-32", cwd=tmp_path).stdout  # analytical: none to show


def test_summary_settings_are_the_ones_the_run_used(tmp_path):
    out = tmp_path / "run"
    result = netsim("collective", "all-reduce", "--size", "64KiB", "--network", "torus-4x4", "--backend", "garnet",
                    "--set", "garnet.buffer_flits=6", "--set", "garnet.vcs=3", "--out", str(out), "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    settings = summary["packet_settings"]
    assert summary["fast_forward"]["on"] and summary["fast_forward"]["cycles"] > 0
    vcs = pd.read_csv(out / "vcs.csv")
    routers = vcs[vcs["link_id"] >= 0]
    assert settings["buffer_flits"] == 6 == routers["buffer_flits"].max() == routers["buffer_flits"].min()
    assert settings["vcs"] == 3 == routers.groupby(["router", "port"])["vc"].count().max()


def test_the_live_view_header_names_the_packet_settings():
    parser = build_parser()
    args = parser.parse_args(["collective", "all-reduce", "--size", "4KiB", "--network", "fat-tree-32",
                              "--backend", "garnet"])
    monitor = RunMonitor()
    run_scenario(args, monitor)
    assert "flit 1000 B, packet 104,000 B (104 flits), buffer 52 flits x 4 VCs" in monitor.title
    assert "credit round trip 52 cycles" in monitor.title


def test_a_bad_garnet_key_lists_the_valid_ones(tmp_path):
    result = netsim("topo", "torus-4x4", "--set", "garnet.foo=3", cwd=tmp_path)
    assert result.returncode == 2
    assert "key 'garnet.foo': unknown key; the keys of garnet: clock_ghz, flit_bytes, packet_bytes, vcs, " \
           "buffer_flits" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("table, key, unit, default", [
    ("garnet", "buffer_flits", "flits", "unset"), ("garnet", "clock_ghz", "GHz", "1.0"),
    ("garnet", "router_latency", "cycles", "1"), ("system", "endpoint-delay", "ns", "10.0"),
    ("system", "local-mem-bw", "GB/s", "0.0"), ("topology (kind = torus or mesh)", "bandwidth", "GB/s", "required"),
    ("system", "all-reduce-implementation", "", '["ring"]')])
def test_list_keys_gives_each_key_its_unit_and_default(tmp_path, table, key, unit, default):
    result = netsim("list", "--keys", "--json", cwd=tmp_path)
    rows = {(row["table"], row["key"]): row for row in json.loads(result.stdout)}
    row = rows[(table, key)]
    assert (row["unit"], row["default"]) == (unit, default) and row["meaning"]
