"""Whole runs in lockstep (system.lockstep) against the per-message reference.

Each case runs one training workload twice, with `collective-simulation = "symmetric"` (only one
representative NPU per class of NPUs that run alike is simulated, when the check proves them alike)
and `"per-message"` (every NPU runs its own loop and messages), and requires the same results: every
timing in summary.json bit for bit, end_to_end.csv and detailed.csv equal, the same bytes per NPU and
per link, link busy times equal up to float rounding. Cases: every bundled workload on bundled
networks, ASTRA-sim's v1 samples, pipeline schedules and generated transformers; and some of them on
the packet backend, which sends every member's copy and compares their arrivals (netsim.garnet.shortcuts.mirrored).
"""

from pathlib import Path

import pytest

from netsim.errors import ConfigError
from netsim.network_config import load_network
from netsim.app.runner import run_training
from system import load_system
from workload import load_workload
from workload.generator import transformer
from workload.model import Comm, Layer, Workload
from workload.roofline import Roofline

WORKLOADS = sorted(p.stem for p in (Path(__file__).parents[2] / "workload" / "data").glob("*.txt"))
MODES = ("per-message", "symmetric")
# summary entries the two ways differ in (see assert_same_run; the peak utilization is compared below)
DIFFERENT = {"events", "wall_time_s", "peak_interval_link_utilization", "max_link_utilization",
             "max_link_utilization_link", "warnings", "simulated_npus"}


def both_ways(network, workload, system="default", passes: int = 2, overrides=(), ties="random", backend=None):
    """The two runs' results, reference first (`ties`: the network's route_ties; `backend` "garnet": the
    packet backend in packet fidelity)."""
    results = []
    network_overrides = [(["route_ties"], ties)] + ([(["garnet", "fidelity"], "packet")] if backend == "garnet" else [])
    for mode in MODES:
        config = load_system(system, [*overrides, (["collective-simulation"], mode)])
        net = load_network(network, backend=backend, overrides=network_overrides)
        results.append(run_training(net, config, workload, passes=passes))
    return results


def assert_same_run(reference, fast):
    """Equal results; `events` and `simulated_npus` differ (fewer NPUs run), and so do the link samples'
    moments (the monitor is checked per simulated event), hence the peak interval utilization and the
    oversubscription warning that reads it; the peak utilization is a busy time, equal up to float rounding."""
    summary, expected = fast.summary, reference.summary
    assert {k: v for k, v in summary.items() if k not in DIFFERENT | {"system"}} == \
        {k: v for k, v in expected.items() if k not in DIFFERENT | {"system"}}
    assert {**summary["system"], "collective-simulation": None} == {**expected["system"], "collective-simulation": None}
    assert summary["max_link_utilization"] == pytest.approx(expected["max_link_utilization"], rel=1e-12)
    busiest = reference.tables["links"].set_index("link_id").loc[summary["max_link_utilization_link"]]
    assert busiest["utilization"] == pytest.approx(expected["max_link_utilization"], rel=1e-12)
    for table in ("end_to_end", "detailed", "npus"):
        assert fast.tables[table].equals(reference.tables[table]), table
    links, expected_links = fast.tables["links"], reference.tables["links"]
    assert links["bytes"].tolist() == expected_links["bytes"].tolist()
    assert links["busy_time_ns"].tolist() == pytest.approx(expected_links["busy_time_ns"].tolist(), rel=1e-12)


def fewer_events(reference, fast) -> bool:
    return fast.summary["events"] < reference.summary["events"]


@pytest.mark.parametrize("network", ["torus-4x4", "torus-2x4x4", "ring-8", "switch-16", "dgx-8x4"])
@pytest.mark.parametrize("name", WORKLOADS)
def test_every_bundled_workload(name, network):
    try:
        reference, fast = both_ways(network, load_workload(name))
    except ConfigError:  # the workload does not fit the network (group sizes): the same both ways
        with pytest.raises(ConfigError):
            both_ways(network, load_workload(name))
        return
    assert_same_run(reference, fast)


def test_lockstep_engages_on_a_torus():
    """On a 4x4 torus (ring neighbours only: no antipode ties) every bundled loop runs one NPU per class."""
    for name in WORKLOADS:
        reference, fast = both_ways("torus-4x4", load_workload(name), overrides=[], passes=1)
        assert fast.summary["events"] * 4 < reference.summary["events"], name
        assert reference.summary["simulated_npus"] == 16 and fast.summary["simulated_npus"] < 16, name


def generated(tp: int = 1, pp: int = 1, dp: int = 1, micro_batches: int = 4, loop: str | None = None) -> Workload:
    workload = transformer(4, 256, 128, 2, tp, pp, dp, Roofline(), micro_batches)
    if loop is not None:
        workload = Workload(workload.name, loop, workload.layers, {**workload.options, "chunks": [2]})
    return workload


@pytest.mark.parametrize("loop", ["PIPELINE_GPIPE", "PIPELINE_1F1B", "PIPELINE_INTERLEAVED"])
@pytest.mark.parametrize("network,pp,ties,engages", [
    ("torus-4x4", 4, "random", True), ("ring-8", 4, "random", True),
    ("torus-2x4x4", 2, "positive", True), ("torus-2x4x4", 8, "positive", True),
    ("torus-2x4x4", 2, "random", False),  # stage to stage is a 4-ring's antipode, its way drawn per message
])
def test_pipeline_schedules(loop, network, pp, ties, engages):
    workload = generated(pp=pp, dp=32 // pp if network == "torus-2x4x4" else 2, micro_batches=pp, loop=loop)
    reference, fast = both_ways(network, workload, ties=ties)
    assert_same_run(reference, fast)
    assert fewer_events(reference, fast) == engages


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_generated_tensor_and_data_parallel_transformer(tp):
    """tp 4 splits the 4-ring in two: its data groups hold antipodes (ties go the positive way here)."""
    reference, fast = both_ways("torus-2x4x4", generated(tp=tp, dp=32 // tp), ties="positive")
    assert_same_run(reference, fast)
    assert fewer_events(reference, fast)


@pytest.mark.parametrize("system", ["Ring_4chunks", "default"])
@pytest.mark.parametrize("overrides", [
    [(["all-reduce-implementation"], "direct")],  # random ties on a 4-ring's antipode: per message
    [(["all-reduce-implementation"], "halving-doubling")],
    [(["all-reduce-implementation"], "double-binary-tree")],  # trees: never in lockstep
    [(["scheduling-policy"], "LIFO"), (["inter-dimension-scheduling"], "themis")],
    [(["phase-barrier"], "all")],
    [(["local-mem-bw"], 50.0)],  # concurrent collectives reduce one after another on an NPU
])
def test_algorithms_and_scheduling_options(system, overrides):
    reference, fast = both_ways("torus-4x4", load_workload("Transformer_HybridParallel"), system, 1, overrides)
    assert_same_run(reference, fast)


def test_an_unshaped_network_runs_per_message_with_the_same_results():
    """fat-tree-32's NPUs are not alike to the checks (its routes differ per pair): per message."""
    reference, fast = both_ways("fat-tree-32", load_workload("Resnet50_DataParallel"))
    assert_same_run(reference, fast)
    assert fast.summary["events"] == reference.summary["events"]


def test_unequal_layers_across_pipeline_stages():
    """Stages with different compute and a point-to-point message per micro-batch each way."""
    layers = tuple(Layer(f"l{i}", -1, 1000 * (i + 1), Comm(None, 0), 700 * (i + 1), Comm(None, 0), 300,
                         Comm("all-reduce", 2**16 * (i + 1)), 0) for i in range(4))
    workload = Workload("uneven", "PIPELINE_1F1B", layers, {"stages": [4], "micro_batches": [6],
                                                            "activation_bytes": [3 * 2**15 + 5]})
    reference, fast = both_ways("torus-4x4", workload)
    assert_same_run(reference, fast)
    assert fast.summary["events"] * 2 < reference.summary["events"]


@pytest.mark.parametrize("tp,pp,ties", [(2, 4, "random"), (4, 2, "positive"), (2, 2, "positive"), (8, 2, "positive")])
def test_generated_tensor_pipeline_and_data_parallel_transformer(tp, pp, ties):
    reference, fast = both_ways("torus-2x4x4", generated(tp=tp, pp=pp, dp=32 // tp // pp), ties=ties)
    assert_same_run(reference, fast)
    assert fewer_events(reference, fast)


def _groups_loop(slots):
    """A loop issuing one all-reduce over each of `slots` (functions npu -> (group, shape, algorithm dims)),
    with the matching role: cases where slots coincide on one NPU and not on another."""
    from system.lockstep import Role
    from workload.loops.core import register_loop

    def role(run):
        return Role(0, tuple((run.system.communicator(None, *slot(run.npu)), ("all-reduce",)) for slot in slots))

    def loop(run):  # every slot's collective in flight at once
        layer = run.workload.layers[0]
        yield run.compute(0, "fwd", layer.fwd_compute)
        issued = [run.issue(0, "wg", layer.wg_comm, group=group, shape=shape, algorithm_dims=algorithm_dims)
                  for group, shape, algorithm_dims in (slot(run.npu) for slot in slots)]
        for event in issued:
            yield from run.wait(0, "wg", event)

    name = f"TEST_GROUPS_{len(slots)}_{id(slots)}"
    register_loop(name, role=role)(loop)
    layers = (Layer("l0", -1, 1000, Comm(None, 0), 0, Comm(None, 0), 0, Comm("all-reduce", 2**20), 0),)
    return Workload("groups", name, layers, {})


def test_slots_that_coincide_only_on_the_representative_run_per_message():
    """Found in review: two slots sharing NPU 0's group but not NPU 4's (whose two collectives then do not
    share a queue) must not stand NPU 0 for NPU 4."""
    a = [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15)]
    b = [(0, 1, 2, 3), (4, 5, 6, 8), (7, 9, 10, 11), (12, 13, 14, 15)]

    def part(parts):
        return lambda npu: (next(p for p in parts if npu in p), None, None)

    reference, fast = both_ways("switch-16", _groups_loop([part(a), part(b)]), passes=1)
    assert_same_run(reference, fast)


def test_one_group_in_two_shapes():
    """Found in review: the same NPUs as (4, 2) and as (2, 4) are two communicators, checked apart."""
    def shaped(shape):
        return lambda npu: (tuple(range(8)) if npu < 8 else tuple(range(8, 16)), shape, (0, 0))

    reference, fast = both_ways("switch-16", _groups_loop([shaped((4, 2)), shaped((2, 4))]), passes=1)
    assert_same_run(reference, fast)


def test_an_interleaved_pipeline_of_one_stage_runs_per_message():
    """Found in review: one device passes activations between its own chunks (a message to itself)."""
    layers = generated(dp=8).layers
    workload = Workload("one-stage", "PIPELINE_INTERLEAVED", layers, {"stages": [1], "micro_batches": [2], "chunks": [2],
                                                                      "activation_bytes": [2**12]})
    reference, fast = both_ways("ring-8", workload, passes=1)
    assert_same_run(reference, fast)


@pytest.mark.parametrize("network", ["torus-4x4", "dgx-8x4"])
@pytest.mark.parametrize("name", ["DLRM_HybridParallel", "MLP_HybridParallel_Data_Model", "microAllToAll"])
def test_packet_backend_runs_in_lockstep_with_the_reference_results(name, network):
    """Every member's copy of the representatives' messages goes through the routers: same results as every
    NPU running its own loop, and one NPU simulated."""
    reference, fast = both_ways(network, load_workload(name), passes=1, backend="garnet")
    assert_same_run(reference, fast)
    assert fast.summary["simulated_npus"] == 1 and fewer_events(reference, fast)


@pytest.mark.parametrize("workload,network,ties", [
    (generated(pp=4, dp=4, micro_batches=4, loop="PIPELINE_1F1B"), "torus-4x4", "random"),
    (generated(tp=4, dp=4), "torus-4x4", "random"),
], ids=["1f1b-pp4-dp4", "tp4-dp4"])
def test_packet_backend_pipelines_and_tensor_parallel_in_lockstep(workload, network, ties):
    reference, fast = both_ways(network, workload, passes=1, ties=ties, backend="garnet")
    assert_same_run(reference, fast)
    assert fast.summary["simulated_npus"] < reference.summary["simulated_npus"]


def test_packet_copies_that_arrive_apart_make_the_run_go_again_per_message():
    """tp2 x pp2 x dp8 on the 2x4x4 torus: the copies of a stage-to-stage message arrive in different
    cycles on the packet backend (their routes are alike, the traffic they meet is not), so the lockstep
    attempt stops there and the run is simulated again per message: the reference's results, and a
    warning that says so."""
    reference, fast = both_ways("torus-2x4x4", generated(tp=2, pp=2, dp=8), passes=1, ties="positive", backend="garnet")
    assert_same_run(reference, fast)
    assert fast.summary["simulated_npus"] == reference.summary["simulated_npus"] == 32
    assert any(warning.startswith("symmetric run: NPU") and warning.endswith(": simulated again per message")
               for warning in fast.summary["warnings"])
