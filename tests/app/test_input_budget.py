"""Inputs that ask for unbounded work or memory are refused before it starts (issue 28, items 8, 9
and 12): input files that are no regular file or too large to parse, topologies too large to build
(from the spec, before the graph is), a collective too large to plan, synth cycles past the limit."""

import argparse
import os
import subprocess
from importlib import import_module

import pytest

from netsim import budget
from netsim.app.cli import main
from netsim.app.scenarios import synth_budget_warnings
from netsim.network_config import load_network
from netsim.topology import TOPOLOGY_KINDS
from tests.helpers import netsim_command


@pytest.fixture
def memory(monkeypatch):
    """24 GiB available, as on the machine the figures were taken on (refusals alike on every host)."""
    monkeypatch.setattr(budget, "available_memory", lambda: 24 << 30)


@pytest.mark.parametrize("make", ["fifo", "device"])
def test_a_study_that_is_no_regular_file_is_refused_at_once(tmp_path, make):
    """A FIFO was read forever, /dev/zero until memory ran out."""
    study = tmp_path / "study.toml"
    if make == "fifo":
        os.mkfifo(study)
    else:
        study = "/dev/zero"
    result = subprocess.run([*netsim_command(), "sweep", str(study)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr == (f"netsim: error: {study}: not a regular file (a pipe, "
                                                        f"socket or device); give a file\n")


def test_an_input_file_too_large_to_parse_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(budget, "available_memory", lambda: 100 << 20)  # 100 MiB: a 1 MiB YAML may take 146
    network = tmp_path / "n.yml"
    network.write_text("#" * (1 << 20))
    assert main(["topo", str(network)]) == 2
    err = capsys.readouterr().err
    assert err == (f"netsim: error: {network}: 1MiB is too large to read as an input file (parsed, about 150MiB, "
                   f"more than the 100MiB of memory available)\n")


def refuse_to_build(monkeypatch):
    def build(spec, name):
        raise AssertionError("the topology was built before the budget was checked")

    monkeypatch.setattr(import_module(f"netsim.topology.{TOPOLOGY_KINDS['torus'].module}"), "build_torus", build)


def test_topo_of_four_billion_npus_is_refused_before_the_graph_is_built(capsys, memory, monkeypatch):
    refuse_to_build(monkeypatch)
    assert main(["topo", "torus-4x4", "--set", "topology.dims=[65536, 65536]"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("netsim: error: the topology of torus-4x4+dims=65536x65536 would need about ") and err.endswith(
        "of memory (4,294,967,296 NPUs, its graph), more than the 24GiB available: use fewer NPUs\n"), err


def test_a_million_npu_collective_is_refused_before_the_graph_is_built(capsys, memory, monkeypatch):
    """It was refused only after 36 s and 3.5 GB of building the topology."""
    refuse_to_build(monkeypatch)
    assert main(["collective", "all-reduce", "--size", "1KiB", "--set", "topology.dims=[1000000]"]) == 2
    err = capsys.readouterr().err
    assert "this all-reduce would need about 46.94GiB of memory (1,000,000 NPUs" in err and err.count("\n") == 1


def test_a_synth_warm_up_of_a_trillion_cycles_is_warned_about_and_past_the_limit_refused(capsys, memory):
    network = load_network("torus-8x8", backend="garnet")
    args = argparse.Namespace(cycles=10_000, warmup=10**12, rate=0.1)
    (warning,) = synth_budget_warnings(args, network)
    assert warning.startswith("this synth of 1,000,000,010,000 cycles (warm-up included) moves about 6.4e+12 "
                              "flit-hops: up to 2.03 years"), warning
    assert main(["synth", "--pattern", "uniform", "--rate", "0.1", "--warmup", str(10**16)]) == 2
    assert capsys.readouterr().err == "netsim: error: --warmup 10000000000000000: at most 1e+15 cycles\n"


@pytest.mark.parametrize("kind", ["COMM_COLL", "COMM_SEND"])
def test_a_chakra_message_too_large_for_the_packet_backend_is_refused_before_building(tmp_path, capsys, memory,
                                                                                       monkeypatch, kind):
    """A COMM node of 2^63-1 bytes on the packet backend grew without end: the trace's largest message
    was not counted (a run of a trace planned none)."""
    from netsim.garnet.network import GarnetNetwork
    from tests.helpers import chakra_node, write_traces

    def built(*args, **kwargs):
        raise AssertionError("the network was built before the budget refused the run")

    monkeypatch.setattr(GarnetNetwork, "__init__", built)
    size = ("int64_val", 2**63 - 1)
    if kind == "COMM_COLL":
        traces = [[chakra_node(0, kind, comm_type=("int64_val", 0), comm_size=size)]] * 2
    else:
        traces = [[chakra_node(0, kind, comm_dst=("int32_val", 1), comm_size=size, comm_tag=("int32_val", 0))],
                  [chakra_node(0, "COMM_RECV", comm_src=("int32_val", 0), comm_size=size, comm_tag=("int32_val", 0))]]
    prefix = write_traces(tmp_path, traces)
    status = main(["run", "--workload", str(prefix), "--network", "ring-8", "--set", "topology.dims=[2]", "--backend",
                   "garnet", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    node = f"node 0 ('{kind.lower()}0')"
    assert status == 2 and err.startswith(f"netsim: error: {prefix}.0.et: {node}: its message of "
                                          f"9,223,372,036,854,775,807 B would need about "), err
    assert "packets in the largest message), more than the 24GiB available" in err and err.count("\n") == 1


@pytest.mark.parametrize("option", ["--workload", "--network", "--system"])
def test_a_device_or_a_folder_given_as_a_config_says_what_it_is(tmp_path, capsys, option):
    """`--workload /dev/zero` said "workload file not found"."""
    what = {"--workload": "workload", "--network": "network", "--system": "system config"}[option]
    assert main(["run", option, "/dev/zero", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (f"netsim: error: /dev/zero: not a regular file (a pipe, socket or device); "
                                       f"give a {what} file\n")
    if option != "--workload":  # (a folder is a workload: Chakra traces)
        assert main(["run", option, str(tmp_path), "--out", str(tmp_path / "o")]) == 2
        assert capsys.readouterr().err == f"netsim: error: {tmp_path}: is a folder, expected a {what} file\n"


def test_a_folder_named_as_a_bundled_network_leaves_the_name_to_the_bundled_one(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "torus-4x4").mkdir()  # e.g. an earlier run's --out
    assert main(["topo", "torus-4x4", "--json"]) == 0
    assert '"npus": 16' in capsys.readouterr().out
