"""Pipeline schedules: bubble fractions with free communication, p2p traffic, data-parallel replicas."""

import pytest

from netsim.errors import ConfigError
from netsim.network_config import load_network
from netsim.app.runner import run_training
from system import load_system
from workload.loops.pipeline import interleaved_schedule, one_f_one_b_schedule
from workload.model import Comm, Layer, Workload

FAST = [(["topology", "bandwidth"], 1e12), (["topology", "latency"], 0)]
NONE = Comm(None, 0)


def pipeline(schedule, stages, micro_batches, chunks=None, layers=8, wg=NONE, activation=0):
    options = {"stages": [stages], "micro_batches": [micro_batches], "activation_bytes": [activation]}
    if chunks:
        options["chunks"] = [chunks]
    # no input-gradient compute: layer 0 has none, so stages stay equal and the formulas exact
    body = tuple(Layer(f"l{i}", -1, 100, NONE, 0, NONE, 200, wg, 0) for i in range(layers))
    return Workload("pipe", f"PIPELINE_{schedule}", body, options)


def run(workload, network="ring-8", net=FAST, passes=1):
    system = load_system("default", [(["endpoint-delay"], 0)])
    return run_training(load_network(network, list(net)), system, workload, passes)


def bubble(result) -> float:
    s = result.summary
    return (s["npu_finish_time_ns"][0] - s["compute_time_ns"]) / s["compute_time_ns"]


@pytest.mark.parametrize("schedule", ["GPIPE", "1F1B"])
@pytest.mark.parametrize("stages, micro_batches", [(4, 4), (4, 8), (8, 16), (2, 6)])
def test_bubble_fraction_is_p_minus_1_over_m(schedule, stages, micro_batches):
    result = run(pipeline(schedule, stages, micro_batches))
    assert bubble(result) == pytest.approx((stages - 1) / micro_batches, rel=1e-6)
    assert result.summary["pipeline_bubble_fraction"] == pytest.approx((stages - 1) / micro_batches, rel=1e-6)


@pytest.mark.parametrize("stages, micro_batches, chunks", [(4, 8, 2), (4, 4, 2), (2, 4, 4), (4, 8, 1)])
def test_interleaved_bubble_fraction_is_p_minus_1_over_v_m(stages, micro_batches, chunks):
    result = run(pipeline("INTERLEAVED", stages, micro_batches, chunks, layers=16))
    assert bubble(result) == pytest.approx((stages - 1) / (chunks * micro_batches), rel=1e-6)


def test_1f1b_keeps_at_most_p_micro_batches_in_flight():
    for device in range(4):
        in_flight = peak = 0
        for kind, _, _ in one_f_one_b_schedule(4, 8, device):
            in_flight += 1 if kind == "F" else -1
            peak = max(peak, in_flight)
        assert peak == 4 - device


def test_interleaved_schedule_runs_every_micro_batch_through_every_chunk_once():
    ops = interleaved_schedule(4, 8, 1, 2)
    assert sorted(op for op in ops if op[0] == "F") == sorted(("F", b, c) for b in range(8) for c in range(2))
    assert len(ops) == 2 * 8 * 2


def test_activations_cost_time_on_a_real_network_and_replicas_all_reduce_gradients():
    free = run(pipeline("1F1B", 4, 4, activation=2**20))
    slow = run(pipeline("1F1B", 4, 4, activation=2**20), net=())
    assert slow.summary["end_to_end_time_ns"] > free.summary["end_to_end_time_ns"]
    replicated = run(pipeline("1F1B", 4, 4, wg=Comm("all-reduce", 2**16)), network="torus-4x4", net=())
    assert replicated.tables["end_to_end"]["wg_total_comm_ns"].sum() > 0


@pytest.mark.parametrize("workload, message", [
    (pipeline("1F1B", 3, 4), "stages: 3 must divide the 8 NPUs"),
    (pipeline("INTERLEAVED", 4, 6, 2), "divisible by stages"),
    (pipeline("GPIPE", 8, 4, layers=4), "cannot fill 8"),
])
def test_pipeline_header_errors(workload, message):
    with pytest.raises(ConfigError, match=message):
        run(workload)


def test_tensor_parallel_groups_inside_a_stage():
    """t consecutive NPUs of a stage form a tensor-parallel group; the data-parallel group takes the same place
    in each (torus-4x4, 2 stages of 8 NPUs, t = 2; and t = 4, a whole row)."""
    from system import build_systems
    from tests.helpers import analytical
    from workload.communicators import split_model_data, split_within

    network = analytical("torus-4x4")
    system = build_systems(network, load_system("default"))[13]
    block = split_model_data(network.topology, 13, 8, "test")[0].on(system)
    assert block.members == tuple(range(8, 16))
    for t, model, data in ((2, (12, 13), (9, 11, 13, 15)), (4, (12, 13, 14, 15), (9, 13))):
        tensor, replicas = (comm.on(system) for comm in split_within(block, 13, t, "test"))
        assert (tensor.members, replicas.members) == (model, data)


def test_tensor_parallel_collectives_block_each_layer():
    tp = Comm("all-reduce", 2**16)
    body = tuple(Layer(f"l{i}", -1, 100, tp, 50, tp, 200, Comm("all-reduce", 2**12), 0) for i in range(4))
    options = {"stages": [2], "micro_batches": [2], "activation_bytes": [2**10]}
    plain = run(Workload("pipe", "PIPELINE_1F1B", body, options), network="torus-4x4", net=())
    tensor = run(Workload("pipe", "PIPELINE_1F1B", body, {**options, "tensor_parallel": [2]}), network="torus-4x4",
                 net=())
    assert plain.tables["end_to_end"]["fwd_total_comm_ns"].sum() == 0  # without t, layers' activations stay put
    table = tensor.tables["end_to_end"][:2]  # NPU 0's: the first stage's layers
    assert (table["fwd_exposed_comm_ns"] > 0).all() and table["ig_total_comm_ns"].tolist()[1] > 0  # layer 0: no ig
    assert tensor.summary["end_to_end_time_ns"] > plain.summary["end_to_end_time_ns"]


def test_tensor_parallel_must_divide_a_stage():
    options = {"stages": [2], "micro_batches": [2], "activation_bytes": [0], "tensor_parallel": [3]}
    body = tuple(Layer(f"l{i}", -1, 100, NONE, 0, NONE, 200, NONE, 0) for i in range(4))
    with pytest.raises(ConfigError, match="tensor_parallel: 3 must be one integer dividing the 4 NPUs"):
        run(Workload("pipe", "PIPELINE_1F1B", body, options))
