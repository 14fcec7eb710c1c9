"""Every legacy loop's ordering on small hand-built workloads: which collectives block, which do not."""

import pytest

from netsim.errors import ConfigError
from netsim.network_config import load_network
from netsim.app.runner import run_training
from system import load_system
from workload.model import Comm, Layer, Workload

FAST = [(["topology", "bandwidth"], 1e12), (["topology", "latency"], 0)]
EXACT = [(["preferred-dataset-splits"], 1), (["endpoint-delay"], 0)]
NONE = Comm(None, 0)


def layer(name="l", fwd=0, ig=0, wg=0, fwd_comm=NONE, ig_comm=NONE, wg_comm=NONE, update=0, parallelism=None):
    return Layer(name, -1, fwd, fwd_comm, ig, ig_comm, wg, wg_comm, update, parallelism)


def run(loop, layers, network="torus-4x4", passes=1, net=(), options=None):
    workload = Workload("hand", loop, tuple(layers), options or {})
    return run_training(load_network(network, list(net)), load_system("default", EXACT), workload, passes)


def e2e(result, column):
    return list(result.tables["end_to_end"][column])


AR, AG, A2A = Comm("all-reduce", 2**18), Comm("all-gather", 2**16), Comm("all-to-all", 2**18)
MLP = [layer(f"l{i}", 100, 100, 100, AG, AR, AR) for i in range(3)]
LOOP_LAYERS = {
    "MODEL": (MLP, {}), "HYBRID_DATA_MODEL": (MLP, {}), "HYBRID_MODEL_DATA": (MLP, {}),
    "HYBRID_TRANSFORMER": (MLP, {"model_parallel_NPU_group": [4]}),
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD": (MLP, {"model_parallel_NPU_group": [2], "checkpoints": [1, 0],
                                              "checkpoint_initiates": [1, 2]}),
    "HYBRID_CUSTOMIZED": ([layer(f"l{i}", 100, 100, 100, AG, AR, AR, parallelism=p)
                          for i, p in enumerate(("DATA", "HYBRID_MODEL_DATA", "MODEL"))], {}),
    "HYBRID_DLRM": ([layer("emb", 100, 100, 100, A2A, A2A)] + MLP, {"args": [2]}),
    "HYBRID_DLRM_ENHANCED": ([layer("emb", 100, 100, 100, A2A, A2A)] + MLP, {"args": [2]}),
    "MICRO": ([layer("c", wg_comm=AR)], {}), "DISTRIBUTED_INFERENCE": (MLP, {}),
    "DATA": (MLP, {}), "DATA_REORDERED": (MLP, {}),
}


@pytest.mark.parametrize("loop", sorted(LOOP_LAYERS))
def test_exposed_comm_vanishes_on_an_infinitely_fast_network(loop):
    layers, options = LOOP_LAYERS[loop]
    result = run(loop, layers, passes=2, net=FAST, options=options)
    assert result.summary["exposed_comm_time_ns"] == pytest.approx(0, abs=1e-2)
    # ENHANCED DLRM computes the next embedding lookup beside the backward pass
    assert result.summary["end_to_end_time_ns"] <= result.summary["compute_time_ns"] * (1 + 1e-6) + 1e-3


@pytest.mark.parametrize("loop", ["MODEL", "MICRO", "DISTRIBUTED_INFERENCE", "HYBRID_DATA_MODEL", "HYBRID_DLRM"])
def test_with_zero_compute_every_collective_is_exposed(loop):
    layers = [layer(f"l{i}", fwd_comm=AG, ig_comm=AR, wg_comm=AR) for i in range(3)]
    if loop == "HYBRID_DLRM":
        layers = [layer("emb", fwd_comm=A2A, ig_comm=A2A)] + layers
    result = run(loop, layers, options={"args": [2]})
    frame = result.tables["end_to_end"]
    exposed = frame[[f"{p}_exposed_comm_ns" for p in ("fwd", "ig", "wg")]].to_numpy().sum()
    total = frame[[f"{p}_total_comm_ns" for p in ("fwd", "ig", "wg")]].to_numpy().sum()
    assert total > 0
    if loop == "DISTRIBUTED_INFERENCE":  # strictly one collective at a time
        assert exposed == pytest.approx(total)
    if loop == "MICRO":  # every collective is issued at once (ASTRA-sim v1): they overlap
        assert exposed < total
    assert result.summary["exposed_comm_time_ns"] == pytest.approx(result.summary["end_to_end_time_ns"])


@pytest.mark.parametrize("wg_compute, hidden", [(10**7, True), (0, False)])
def test_model_loop_blocks_on_forward_and_on_input_gradient_after_the_weight_gradient(wg_compute, hidden):
    """As ASTRA-sim v1: the forward collective blocks; a layer's input-gradient collective overlaps
    its own weight-gradient compute; model parallelism shards the weights, so no weight-gradient
    collective runs; the first layer computes its input gradient but passes none on."""
    layers = [layer(f"l{i}", 1, 3, wg_compute, AG, AR, AR) for i in range(2)]
    result = run("MODEL", layers)
    assert e2e(result, "fwd_exposed_comm_ns") == pytest.approx(e2e(result, "fwd_total_comm_ns"))
    assert e2e(result, "ig_total_comm_ns")[1] > 0 and e2e(result, "ig_total_comm_ns")[0] == 0
    exposed = e2e(result, "ig_exposed_comm_ns")[1]
    assert exposed == 0 if hidden else exposed == pytest.approx(e2e(result, "ig_total_comm_ns")[1])
    assert e2e(result, "wg_total_comm_ns") == [0, 0]
    assert e2e(result, "ig_compute_ns") == [3, 3]


def test_hybrid_input_gradient_collective_overlaps_the_same_layers_weight_gradient_compute():
    long_wg = [layer(f"l{i}", 1, 1, 10**7, AG, AR, AR) for i in range(2)]
    no_wg = [layer(f"l{i}", 1, 1, 0, AG, AR, NONE) for i in range(2)]
    hidden, exposed = run("HYBRID_DATA_MODEL", long_wg), run("HYBRID_DATA_MODEL", no_wg)
    assert e2e(hidden, "ig_exposed_comm_ns")[1] == 0 and e2e(hidden, "ig_total_comm_ns")[1] > 0
    assert e2e(exposed, "ig_exposed_comm_ns")[1] == pytest.approx(e2e(exposed, "ig_total_comm_ns")[1])
    assert e2e(hidden, "fwd_exposed_comm_ns") == pytest.approx(e2e(hidden, "fwd_total_comm_ns"))


def test_hybrid_dimensions_model_then_data_and_the_reverse():
    layers = [layer("l0", fwd_comm=AG, wg_comm=AR)]
    data_model = run("HYBRID_DATA_MODEL", layers).tables["detailed"]
    model_data = run("HYBRID_MODEL_DATA", layers).tables["detailed"]
    assert set(data_model[data_model["pass"] == "fwd"]["dim"]) == {0}
    assert set(data_model[data_model["pass"] == "wg"]["dim"]) == {1}
    assert set(model_data[model_data["pass"] == "fwd"]["dim"]) == {1}
    assert set(model_data[model_data["pass"] == "wg"]["dim"]) == {0}


def test_transformer_model_group_that_splits_a_dimension():
    """torus-2x4x4, a group of 4 splits dimension 1 (4 NPUs) in two, as ASTRA-sim v1 does: the model
    group's collectives run on axes of 2 (dimension 0) and 2 (half of dimension 1), the data
    group's on axes of 2 (the other half) and 4 (dimension 2)."""
    layers = [layer("l0", 10, 10, 10, AG, AR, AR), layer("l1", 10, 10, 10, AG, AR, AR)]
    split = run("HYBRID_TRANSFORMER", layers, network="torus-2x4x4", options={"model_parallel_NPU_group": [4]})
    aligned = run("HYBRID_TRANSFORMER", layers, network="torus-2x4x4", options={"model_parallel_NPU_group": [8]})
    assert split.summary["exposed_comm_time_ns"] > 0 and aligned.summary["exposed_comm_time_ns"] > 0
    assert sum(e2e(split, "fwd_total_comm_ns")) != sum(e2e(aligned, "fwd_total_comm_ns"))
    detailed = split.tables["detailed"]
    assert set(detailed[detailed["pass"] == "fwd"]["dim"]) == {0, 1}  # the model group's two axes
    assert set(detailed[detailed["pass"] == "wg"]["dim"]) == {0, 1}


def test_recompute_repeats_the_forward_from_the_checkpoint():
    layers = [layer(f"l{i}", 100, 10, 10) for i in range(4)]
    options = {"model_parallel_NPU_group": [4], "checkpoints": [1, 1], "checkpoint_initiates": [1, 3]}
    result = run("HYBRID_TRANSFORMER_FWD_IN_BCKWD", layers, options=options)
    # layers 1 and 2 recomputed once: ASTRA-sim v1 recomputes from the checkpoint up to the initiating layer
    assert e2e(result, "fwd_compute_ns") == [100, 200, 200, 100]


def test_update_time_delays_the_next_forward_of_the_layer():
    layers = [layer("l0", 10, 10, 10, wg_comm=AR, update=5000)]
    plain = run("DATA", [layer("l0", 10, 10, 10, wg_comm=AR)], passes=2)
    updated = run("DATA", layers, passes=2)
    assert updated.summary["end_to_end_time_ns"] == pytest.approx(plain.summary["end_to_end_time_ns"] + 2 * 5000)


def test_dlrm_embedding_all_to_all_overlaps_the_bottom_mlp_and_blocks_the_interaction():
    bottom = [layer(f"b{i}", 10**6, 1, 1) for i in range(2)]
    top = [layer("top", 1, 1, 1)]
    hidden = run("HYBRID_DLRM", [layer("emb", 1, 1, 1, A2A, A2A)] + bottom + top, options={"args": [2]})
    exposed = run("HYBRID_DLRM", [layer("emb", 1, 1, 1, A2A, A2A)] + [layer("b", 1, 1, 1)] * 2 + top,
                  options={"args": [2]})
    assert e2e(hidden, "fwd_exposed_comm_ns")[0] == 0 and e2e(hidden, "fwd_total_comm_ns")[0] > 0
    assert e2e(exposed, "fwd_exposed_comm_ns")[0] > 0


def test_dlrm_enhanced_prefetches_the_next_embedding_lookup():
    layers = [layer("emb", 1, 1, 1, A2A, A2A), layer("b0", 1, 10**6, 1), layer("b1", 1, 10**6, 1), layer("top", 1, 1, 1)]
    plain = run("HYBRID_DLRM", layers, passes=3, options={"args": [2]})
    enhanced = run("HYBRID_DLRM_ENHANCED", layers, passes=3, options={"args": [2]})
    assert enhanced.summary["end_to_end_time_ns"] < plain.summary["end_to_end_time_ns"]


def test_reordered_backward_issues_weight_gradients_later_than_data():
    layers = [layer(f"l{i}", 10, 10**5, 10, wg_comm=AR) for i in range(3)]
    data, reordered = run("DATA", layers, passes=2), run("DATA_REORDERED", layers, passes=2)
    assert reordered.summary["compute_time_ns"] == data.summary["compute_time_ns"]
    assert reordered.summary["end_to_end_time_ns"] > data.summary["end_to_end_time_ns"]


@pytest.mark.parametrize("options, message", [
    ({}, "model_parallel_NPU_group: N"),
    ({"model_parallel_NPU_group": [3]}, "must divide the 16 NPUs"),
])
def test_transformer_header_errors(options, message):
    with pytest.raises(ConfigError, match=message):
        run("HYBRID_TRANSFORMER", MLP, options=options)


def test_customized_layer_without_parallelism_names_its_line():
    with pytest.raises(ConfigError, match="13th field"):
        run("HYBRID_CUSTOMIZED", MLP)
