"""The data-parallel loop: ASTRA-sim's ordering, exposed communication, and determinism."""

import pytest

from netsim.network_config import load_network
from netsim.app.runner import run_training
from system import load_system
from workload import load_workload
from workload.model import Comm, Layer, Workload


def tiny_workload(wg_bytes=(4096, 4096, 4096), compute=1000):
    layers = tuple(Layer(f"l{i}", -1, compute, Comm(None, 0), compute, Comm(None, 0), compute,
                         Comm("all-reduce", size), 0) for i, size in enumerate(wg_bytes))
    return Workload("tiny", "DATA", layers)


def run(workload, network="ring-8", passes=1, system=(), net=()):
    return run_training(load_network(network, list(net)), load_system("default", list(system)), workload, passes)


def test_compute_is_accounted_per_phase_and_first_layer_has_no_input_gradient():
    result = run(tiny_workload(compute=1000), passes=2)
    e2e = result.tables["end_to_end"]
    assert list(e2e["fwd_compute_ns"]) == [2000.0] * 3
    assert list(e2e["wg_compute_ns"]) == [2000.0] * 3
    assert list(e2e["ig_compute_ns"]) == [0.0, 2000.0, 2000.0]
    assert result.summary["compute_time_ns"] == 2000 * 8


def test_end_to_end_csv_has_the_documented_columns_in_order():
    """workload.report.END_TO_END_COLUMNS documents end_to_end.csv: each `{pass}` entry once per pass."""
    from workload.loops import PASSES
    from workload.report import END_TO_END_COLUMNS

    expected = [name.format(**{"pass": p}) for name in END_TO_END_COLUMNS
                for p in (PASSES if "{pass}" in name else ("",))]
    assert list(run(tiny_workload()).tables["end_to_end"].columns) == expected


def test_exposed_comm_vanishes_on_an_infinitely_fast_network():
    fast = [(["topology", "bandwidth"], 1e12), (["topology", "latency"], 0)]
    result = run(tiny_workload(), passes=3, system=[(["endpoint-delay"], 0)], net=fast)
    assert result.summary["exposed_comm_time_ns"] == pytest.approx(0, abs=1e-3)
    assert result.summary["end_to_end_time_ns"] == pytest.approx(result.summary["compute_time_ns"], rel=1e-9)


def test_with_zero_compute_exposed_comm_equals_the_collectives_time():
    workload = tiny_workload(wg_bytes=(0, 0, 2**20), compute=0)
    result = run(workload, system=[(["preferred-dataset-splits"], 1), (["endpoint-delay"], 0)])
    ar_time = 2 * 7 * (500 + 2**20 / 8 / 50)
    assert result.summary["exposed_comm_time_ns"] == pytest.approx(ar_time)
    assert result.summary["end_to_end_time_ns"] == pytest.approx(ar_time)


def test_weight_gradient_collectives_do_not_block_backward_but_block_next_forward():
    # compute is tiny, all-reduce is long: backward runs on; the next forward of layer 0 waits.
    workload = tiny_workload(wg_bytes=(2**20, 0, 0), compute=10)
    result = run(workload, passes=2, system=[(["preferred-dataset-splits"], 1), (["endpoint-delay"], 0)])
    e2e = result.tables["end_to_end"]
    ar_time = 2 * 7 * (500 + 2**20 / 8 / 50)
    # layer 0's all-reduce is issued last in backward, so the next forward (and the final wait) waits all of it
    assert e2e.loc[0, "wg_exposed_comm_ns"] == pytest.approx(2 * ar_time)
    # per pass: forward 3 x 10, backward 3 wg + 2 ig computes of 10, then one exposed all-reduce
    assert result.summary["end_to_end_time_ns"] == pytest.approx(2 * (30 + 50) + 2 * ar_time)
    assert e2e.loc[0, "wg_total_comm_ns"] == pytest.approx(2 * ar_time)
    assert e2e.loc[1, "wg_exposed_comm_ns"] == 0


def test_resnet50_runs_and_is_deterministic():
    workload = load_workload("Resnet50_DataParallel")
    first = run(workload, network="torus-2x4x4")
    second = run(workload, network="torus-2x4x4")
    assert first.summary["end_to_end_time_ns"] == second.summary["end_to_end_time_ns"]
    assert first.tables["end_to_end"].equals(second.tables["end_to_end"])
    assert first.tables["links"].equals(second.tables["links"])
    assert first.summary["end_to_end_time_ns"] > first.summary["compute_time_ns"]
    assert len(first.summary["npu_finish_time_ns"]) == 32
    detailed = first.tables["detailed"]
    assert set(detailed["phase"]) == {1, 2, 3, 4, 5}  # RS dim0, RS dim1, AR dim2, AG dim1, AG dim0
