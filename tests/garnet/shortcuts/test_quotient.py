"""Symmetric runs folded onto a quotient torus (netsim.garnet.shortcuts.quotient): every table the same as with every
copy sent through the whole torus; traffic that does not fold is refused, and the runner sends every copy."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from netsim.backends import create_network
from netsim.errors import QuotientConflict
from netsim.network_config import load_network
from netsim.network_plan import plan_network
from netsim.app.progress import RunMonitor
from netsim.app.runner import _attempts, run_collective, run_training
from system import build_systems, load_system
from tests.helpers import netsim_command
from workload import load_workload

TABLES = ("links", "nic_links", "vcs", "packets", "packet_latency", "npus")


def collective(network: str, overrides: list, kind: str, algorithm: str, nbytes: int, symmetry: str):
    config = load_network(network, backend="garnet", overrides=[*overrides, (["garnet", "symmetry"], symmetry)])
    dims = len(config.build_topology().dims)
    return run_collective(config, load_system("default", [([f"{kind}-implementation"], [algorithm] * dims)]), kind,
                          nbytes)


def assert_same_tables(folded, copies):
    assert folded.summary["collective_time_ns"] == copies.summary["collective_time_ns"]
    assert folded.summary["max_link_utilization"] == copies.summary["max_link_utilization"]
    for name in TABLES:
        ours, theirs = folded.tables[name], copies.tables[name]
        if name == "packets":  # component steps: the quotient steps fewer
            ours, theirs = ours.drop(columns=["events"]), theirs.drop(columns=["events"])
        assert ours.equals(theirs), name


@pytest.mark.parametrize("network, overrides, kind, algorithm, folded_to", [
    # flit fidelity: a VC's peak used to depend on which router stepped first in a cycle (not the same at
    # the wrap-around link's images)
    ("ring-8", [(["garnet", "fidelity"], "flit")], "all-reduce", "ring", [4]),
    ("torus-4x4", [(["topology", "dims"], [8, 8]), (["garnet", "fidelity"], "packet")], "all-reduce", "ring", [4, 4]),
    ("torus-4x4", [(["topology", "dims"], [6, 6]), (["garnet", "fidelity"], "packet")], "reduce-scatter", "ring",
     [3, 3]),
    ("torus-4x4", [(["topology", "dims"], [8, 8]), (["garnet", "allocator"], "booksim"),
                   (["garnet", "router_latency"], 4)], "all-gather", "ring", [4, 4]),
    ("torus-4x4", [(["topology", "dims"], [8, 4]), (["garnet", "routing"], "dor-booksim"),
                   (["garnet", "fidelity"], "packet")], "all-to-all", "ring", [4, 4]),
    ("torus-2x4x4", [(["topology", "dims"], [8, 4, 4]), (["garnet", "fidelity"], "packet")], "all-reduce", "ring",
     [4, 4, 4]),
])
def test_a_folded_run_reports_what_every_copy_reports(network, overrides, kind, algorithm, folded_to):
    """Every statistic of a run on the quotient, read back onto the torus, is the one of the run that sends
    every copy through the whole torus: bit for bit, per link, NIC port, VC and packet."""
    folded = collective(network, overrides, kind, algorithm, 2**19, "quotient")
    copies = collective(network, overrides, kind, algorithm, 2**19, "copies")
    assert folded.summary["folded_to"] == folded_to and copies.summary["folded_to"] is None
    assert_same_tables(folded, copies)
    assert folded.summary["events"] < copies.summary["events"]


def test_a_training_run_in_lockstep_folds_with_the_same_tables():
    """A data-parallel loop runs one NPU in lockstep (system.lockstep), its orbits planned before the run: on
    ring-16 they fold onto 4 NPUs, and every table (the link time series too) is every copy's."""
    runs = []
    for symmetry in ("quotient", "copies"):
        config = load_network("ring-16", backend="garnet", overrides=[(["garnet", "fidelity"], "packet"),
                                                                      (["garnet", "symmetry"], symmetry)])
        runs.append(run_training(config, load_system("default"), load_workload("Resnet50_DataParallel")))
    folded, copies = runs
    assert folded.summary["folded_to"] == [4] and folded.summary["simulated_npus"] == 1
    assert folded.summary["end_to_end_time_ns"] == copies.summary["end_to_end_time_ns"]
    for name in ("links", "vcs", "npus", "packet_latency", "link_timeseries"):
        assert folded.tables[name].equals(copies.tables[name]), name


@pytest.mark.parametrize("network, overrides, algorithm", [
    ("switch-16", [], "ring"),  # not a torus
    ("torus-4x4", [(["topology", "dims"], [8, 8]), (["garnet", "fidelity"], "packet")], "direct"),  # peers 4 away
    # one NIC port feeds the links of both dimensions, in another order at the wrap-around routers
    ("torus-4x4", [(["topology", "dims"], [8, 8]), (["garnet", "nic_ports"], "single"),
                   (["garnet", "fidelity"], "packet")], "ring"),
])
def test_a_run_that_does_not_fold_sends_every_copy(network, overrides, algorithm):
    folded = collective(network, overrides, "all-reduce", algorithm, 2**18, "quotient")
    assert folded.summary["folded_to"] is None
    assert_same_tables(folded, collective(network, overrides, "all-reduce", algorithm, 2**18, "copies"))


def test_links_that_carry_both_dateline_classes_do_not_fold():
    """Messages two places on along ring-16 could repeat every 8 NPUs, but the link into NPU 1 carries the copy
    15 -> 1, past the wrap link (the dateline's upper class), and the copy 0 -> 2 (the lower): no VC half of
    its image runs both alike, so every copy is sent (and those copies do not even arrive together)."""
    network = create_network("garnet", load_network("ring-16").build_topology())
    orbit = network.uniform_orbit([(src, (src + 2) % 16) for src in range(16)])
    assert network.mirror([orbit]) and network.folded_to() is None


def test_counters_read_midway_are_those_of_every_copy():
    """The live view reads link counters and packets in flight during a run: the same as every copy's."""
    readings = []
    for symmetry in ("quotient", "copies"):
        config = load_network("ring-8", backend="garnet", overrides=[(["garnet", "symmetry"], symmetry)])
        network = create_network("garnet", config.build_topology(), config=config)
        for system in build_systems(network, load_system("default")):
            system.all_reduce(2**20)
        network.run(until=15000.0)
        link_bytes, busy = network.link_counters()
        readings.append((list(link_bytes), list(busy), network.packets_in_network, network.flit_hops(),
                         network.folded_to()))
    (*ours, folded_to), (*theirs, unfolded) = readings
    assert ours == theirs and ours[2] > 0
    assert folded_to == [4] and unfolded is None


def test_traffic_beside_a_folded_run_is_refused():
    """A message that is not a copy of the representative's cannot run on the quotient: QuotientConflict."""
    network = create_network("garnet", load_network("ring-8").build_topology())
    for system in build_systems(network, load_system("default")):
        system.all_reduce(2**20)
    network.run(until=1000.0)
    assert network.folded_to() == [4]
    with pytest.raises(QuotientConflict, match="a message 2 -> 3 outside the symmetric run folded onto a quotient"):
        network.endpoint(2).post(3, 2**20, "beside")


def test_the_runner_sends_every_copy_after_a_quotient_conflict():
    """_attempts: an attempt that raised QuotientConflict is run again with garnet.symmetry = 'copies' (still
    symmetric), and the summary's warnings say so."""
    calls = []

    def attempt(symmetric: bool, plan):
        calls.append((symmetric, plan.config.garnet.symmetry))
        if plan.config.garnet.symmetry == "quotient":
            raise QuotientConflict("a message 2 -> 3 outside the symmetric run folded onto a quotient")
        return "every copy's result"

    monitor = RunMonitor()
    assert _attempts(attempt, plan_network(load_network("torus-4x4"), "a test"), monitor) == "every copy's result"
    assert calls == [(True, "quotient"), (True, "copies")]
    assert monitor.notes == ["a message 2 -> 3 outside the symmetric run folded onto a quotient: simulated again "
                             "with garnet.symmetry = 'copies'"]


def test_the_command_line_says_what_the_run_was_simulated_on(tmp_path):
    done = subprocess.run([*netsim_command(), "collective", "all-reduce", "--network", "torus-8x8", "--backend",
                           "garnet", "--set", "garnet.fidelity=packet", "--size", "1MiB", "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.search(r"simulated on\s+.\s+quotient torus 4x4", done.stdout)
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["folded_to"] == [4, 4]
