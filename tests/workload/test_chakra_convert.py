"""`netsim workload to-chakra`: a converted workload runs as a trace with the legacy run's results."""

import dataclasses
import json
import subprocess

import pytest

from netsim.backends import BACKENDS
from netsim.bundled import bundled_names
from netsim.errors import ConfigError
from netsim.network_config import load_network
from netsim.app.runner import run_trace, run_training
from system import load_system
from tests.helpers import netsim_command
from workload import WORKLOAD_SUFFIXES, load_workload, register_loop, with_overrides
from workload.chakra import load_comm_groups, write_chakra
from workload.chakra.schema import NODE_TYPES
from workload.chakra.stream import read_trace_file
from workload.model import Comm, Layer, Workload


SAMPLES = sorted(bundled_names("workload.data", WORKLOAD_SUFFIXES))  # ASTRA-sim's legacy sample workloads


def both_ways(workload, tmp_path, network="torus-4x4", backend="analytical", passes=1, system="default"):
    """(legacy run, trace run) of `workload` converted for `network`."""
    net = load_network(network, [], backend)
    legacy = run_training(net, load_system(system), workload, passes=passes)
    written = write_chakra(workload, net.build_topology(), tmp_path, passes)
    groups = [path for path in written if path.suffix == ".json"]
    trace = run_trace(net, load_system(system), tmp_path / workload.name,
                      comm_groups=load_comm_groups(groups[0]) if groups else None)
    return legacy, trace


def update_ns(trace) -> list[float]:
    """Per NPU, the time of the weight-update nodes (the legacy update time) of a trace run."""
    nodes = trace.tables["nodes"]
    updates = nodes[nodes["name"].str.endswith(".update")]
    return [updates[updates.npu == npu]["duration_ns"].sum() for npu in range(len(trace.summary["npu_finish_time_ns"]))]


def assert_same_results(legacy, trace):
    """Equal times and traffic. Weight updates run beside the loop: a trace counts them as compute
    where they overlap no other compute; the legacy loops count none of them (only their wait for
    one, as exposed communication). A trace's exposed communication is finish - compute (ASTRA-sim)."""
    a, b = legacy.summary, trace.summary
    assert b["end_to_end_time_ns"] == a["end_to_end_time_ns"]
    assert b["npu_finish_time_ns"] == a["npu_finish_time_ns"]
    assert trace.tables["npus"].equals(legacy.tables["npus"])
    assert trace.tables["links"]["bytes"].tolist() == legacy.tables["links"]["bytes"].tolist()
    for compute, legacy_compute, update in zip(b["npu_compute_time_ns"], a["npu_compute_time_ns"], update_ns(trace)):
        assert legacy_compute * (1 - 1e-12) <= compute <= (legacy_compute + update) * (1 + 1e-12)
    exposed = [finish - compute for finish, compute in zip(b["npu_finish_time_ns"], b["npu_compute_time_ns"])]
    assert b["npu_exposed_comm_time_ns"] == pytest.approx(exposed, rel=1e-12)


@pytest.mark.parametrize("name", SAMPLES)
def test_astra_sim_sample_workloads_converted_to_traces_give_the_legacy_results(tmp_path, name):
    assert_same_results(*both_ways(load_workload(name), tmp_path))


@pytest.mark.parametrize("backend", sorted(set(BACKENDS) - {"analytical"}))
@pytest.mark.parametrize("name", ["MLP_HybridParallel_Data_Model", "DLRM_HybridParallel"])
def test_converted_workloads_give_the_legacy_results_on_the_other_backends(tmp_path, name, backend):
    assert_same_results(*both_ways(load_workload(name), tmp_path, "ring-8", backend))


def test_explicit_npu_groups_become_communicator_groups(tmp_path):
    # model_parallel_NPU_group 4 splits the 8-NPU ring: the groups are explicit, not dimensions
    legacy, trace = both_ways(load_workload("Transformer_HybridParallel"), tmp_path, "ring-8")
    assert_same_results(legacy, trace)
    groups = json.loads((tmp_path / "Transformer_HybridParallel.comm_groups.json").read_text())
    assert sorted(groups.values()) == [[0, 1, 2, 3], [0, 4], [1, 5], [2, 6], [3, 7], [4, 5, 6, 7]]


def pipeline(schedule, stages, micro_batches, chunks=None):
    options = {"stages": [stages], "micro_batches": [micro_batches], "activation_bytes": [1 << 18]}
    if chunks:
        options["chunks"] = [chunks]
    none = Comm(None, 0)
    layers = tuple(Layer(f"l{i}", -1, 100 + i, none, 30, none, 200, Comm("all-reduce", 1 << 16), 5)
                   for i in range(16))
    return Workload("pipe", f"PIPELINE_{schedule}", layers, options)


@pytest.mark.parametrize("workload, network, passes", [
    (pipeline("1F1B", 4, 8), "torus-4x4", 2),  # sends and receives between stages, replica all-reduces
    (pipeline("INTERLEAVED", 4, 8, 2), "ring-16", 1),
    # the next embedding lookup in a simpy process of its own, beside the backward pass
    (dataclasses.replace(load_workload("DLRM_HybridParallel"), parallelism="HYBRID_DLRM_ENHANCED"), "torus-4x4", 2),
    (with_overrides(load_workload("Resnet50_DataParallel"), [("bucket-size", "4MiB")]), "torus-4x4", 1),
    (load_workload("MLP_ModelParallel"), "torus-2x4x4", 2),
    (dataclasses.replace(load_workload("Resnet50_DataParallel"), parallelism="DATA_REORDERED"), "torus-4x4", 1),
], ids=["1f1b", "interleaved", "dlrm-enhanced", "ddp-buckets", "two-passes-3d", "user-loop"])
def test_every_loop_family_converts_with_equal_results(tmp_path, workload, network, passes):
    assert_same_results(*both_ways(workload, tmp_path, network, passes=passes))


def test_converted_nodes_carry_astra_sim_attributes(tmp_path):
    workload = load_workload("Resnet50_DataParallel")
    write_chakra(workload, load_network("torus-4x4").build_topology(), tmp_path)
    metadata, nodes = read_trace_file(tmp_path / "Resnet50_DataParallel.3.et")
    assert metadata.version == "0.0.4"
    by_name = {node.name: node for node in nodes}
    conv1 = workload.layers[0]
    fwd = by_name["conv1.fwd"]
    assert NODE_TYPES[fwd.type] == "COMP_NODE"
    assert fwd.duration_micros == round(conv1.fwd_compute / 1000)
    attrs = {attr.name: attr for attr in fwd.attr}
    assert attrs["duration_ns"].double_val == conv1.fwd_compute and not attrs["is_cpu_op"].bool_val
    reduce = by_name["conv1.wg.all-reduce"]
    attrs = {attr.name: attr for attr in reduce.attr}
    assert NODE_TYPES[reduce.type] == "COMM_COLL_NODE"
    assert attrs["comm_type"].int64_val == 0 and attrs["comm_size"].int64_val == conv1.wg_comm.nbytes
    assert list(attrs["involved_dim"].bool_list.values) == [True, True]
    assert list(reduce.data_deps) == [by_name["conv1.wg"].id]  # issued right after its weight-gradient compute
    update = by_name["conv1.wg.update"]
    assert NODE_TYPES[update.type] == "COMP_NODE"
    assert {attr.name: attr for attr in update.attr}["duration_ns"].double_val == conv1.update_time
    assert list(update.data_deps) == [reduce.id]


def test_toml_workloads_convert_too(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text('[workload]\nloop = "DATA"\n[[layer]]\nname = "a"\nfwd-compute = "1.5us"\nwg-compute = "2us"\n'
                    'wg-comm = "all-reduce"\nwg-comm-size = "1MiB"\n[[layer]]\nname = "b"\ngemm = [512, 512, 512]\n'
                    'ig-compute = 700\nwg-compute = 900\nwg-comm = "all-reduce"\nwg-comm-size = "2MiB"\n')
    assert_same_results(*both_ways(load_workload(path), tmp_path / "out", "ring-8"))


def test_cli_converts_then_runs_with_the_legacy_end_to_end_time(tmp_path):
    command = netsim_command()
    out = tmp_path / "traces"
    converted = subprocess.run([*command, "workload", "to-chakra", "MLP_ModelParallel", "--network", "ring-8",
                                "--out", str(out)], capture_output=True, text=True)
    assert converted.returncode == 0, converted.stderr
    assert f"netsim run --workload {out / 'MLP_ModelParallel'} --network ring-8" in converted.stdout
    assert sorted(p.name for p in out.iterdir()) == sorted(f"MLP_ModelParallel.{n}.et" for n in range(8))
    runs = [subprocess.run([*command, "run", "--workload", workload, "--network", "ring-8", "--json", "--quiet",
                            "--out", str(tmp_path / name)], capture_output=True, text=True)
            for name, workload in (("legacy", "MLP_ModelParallel"), ("trace", str(out)))]
    legacy, trace = (json.loads(done.stdout) for done in runs)
    assert trace["end_to_end_time_ns"] == legacy["end_to_end_time_ns"]


def test_cli_to_chakra_takes_workload_options_only(tmp_path):
    done = subprocess.run([*netsim_command(), "workload", "to-chakra", "MLP_ModelParallel", "--set",
                           "topology.dims=[4]", "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "to-chakra takes workload options only" in done.stderr


@register_loop("TEST_WAITS_FOR_ALL_OF")
def _waits_for_all_of(run):
    yield run.env.all_of([run.compute(0, "fwd", 5)])


def test_a_loop_using_what_the_recorder_cannot_record_is_a_one_line_error(tmp_path):
    workload = dataclasses.replace(load_workload("microAllReduce"), parallelism="TEST_WAITS_FOR_ALL_OF")
    with pytest.raises(ConfigError, match="the TEST_WAITS_FOR_ALL_OF loop uses environment.all_of, which to-chakra "
                                          "cannot record"):
        write_chakra(workload, load_network("ring-8").build_topology(), tmp_path)
