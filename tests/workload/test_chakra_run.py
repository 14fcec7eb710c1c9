"""Executing Chakra traces: dependencies, compute, collectives, point-to-point, memory, limits, errors."""

import json
import subprocess
from pathlib import Path

import pytest

from netsim.backends import BACKENDS
from netsim.errors import ConfigError, DeadlockError
from netsim.network_config import load_network
from netsim.app.progress import RunMonitor
from netsim.app.runner import run_collective, run_trace
from system import load_system
from tests.helpers import chakra_node, netsim_command, write_traces
from workload.chakra import MemoryConfig, load_comm_groups, load_memory, load_trace

DATA = Path(__file__).parents[1] / "data" / "chakra"
RING8 = DATA / "Ring_8npus.yml"
MIB = 1 << 20


def network(npus=2, backend="analytical", dims=None):
    return load_network("ring-8", [(["topology", "dims"], dims or [npus])], backend)


def run(prefix, npus=2, system=(), dims=None, backend="analytical", **options):
    return run_trace(network(npus, backend, dims), load_system("default", list(system)), prefix, **options)


def comp(node_id, ns, deps=(), ctrl=(), **attrs):
    return chakra_node(node_id, "COMP", deps, ctrl, duration_ns=("double_val", ns), **attrs)


def coll(node_id, kind=0, nbytes=MIB, deps=(), **attrs):
    return chakra_node(node_id, "COMM_COLL", deps, comm_type=("int64_val", kind), comm_size=("int64_val", nbytes),
                       **attrs)


def send(node_id, dst, nbytes, tag, deps=()):
    return chakra_node(node_id, "COMM_SEND", deps, comm_dst=("int32_val", dst), comm_size=("int64_val", nbytes),
                       comm_tag=("int32_val", tag))


def recv(node_id, src, nbytes, tag, deps=()):
    return chakra_node(node_id, "COMM_RECV", deps, comm_src=("int32_val", src), comm_size=("int64_val", nbytes),
                       comm_tag=("int32_val", tag))


def timings(result, npu=0) -> dict:
    """node id -> (start, end) on `npu`, from nodes.csv."""
    nodes = result.tables["nodes"]
    rows = nodes[nodes["npu"] == npu]
    return {row.node_id: (row.start_ns, row.end_ns) for row in rows.itertuples()}


def diamond():
    """a (100 ns) before b (50) and c (70, a control dependency), d (10) after both."""
    return [comp(0, 100), comp(1, 50, deps=[0]), comp(2, 70, ctrl=[0]), comp(3, 10, deps=[1], ctrl=[2])]


def test_every_node_starts_when_its_data_and_control_dependencies_have_finished(tmp_path):
    result = run(write_traces(tmp_path, [diamond(), diamond()]))
    assert timings(result) == {0: (0, 100), 1: (100, 150), 2: (100, 170), 3: (170, 180)}
    assert result.summary["end_to_end_time_ns"] == 180
    assert result.summary["compute_time_ns"] == 180  # time some compute ran, overlapping nodes counted once
    assert result.summary["exposed_comm_time_ns"] == 0


def test_in_flight_one_runs_one_node_per_engine_lowest_id_first(tmp_path):
    result = run(write_traces(tmp_path, [diamond(), diamond()]), in_flight=1)
    assert timings(result) == {0: (0, 100), 1: (100, 150), 2: (150, 220), 3: (220, 230)}


def test_in_flight_one_serializes_collectives_but_not_compute_beside_them(tmp_path):
    npu = [coll(0), coll(1), comp(2, 10)]
    free = timings(run(write_traces(tmp_path / "free", [npu, npu])))
    held = timings(run(write_traces(tmp_path / "held", [npu, npu]), in_flight=1))
    assert free[0][0] == free[1][0] == 0
    assert held[0][0] == 0 and held[1][0] == held[0][1]
    assert held[2] == (0, 10)


@pytest.mark.parametrize("backend", ["analytical", "congestion-aware"])
def test_a_collective_issued_while_a_root_collective_runs_runs_as_the_reference(tmp_path, backend):
    """A trace's root collectives are issued before the run, yet its later nodes issue collectives beside
    them: traces run message by message whatever collective-simulation says (it refused this one)."""
    per_npu = [[coll(0, 0, MIB), comp(1, 1000.0), coll(2, 0, MIB, deps=[1]), *(
        [send(3, 3, 4 * MIB, 7)] if npu == 2 else [recv(3, 2, 4 * MIB, 7)] if npu == 3 else [])] for npu in range(8)]
    prefix = write_traces(tmp_path / "t", per_npu)
    results = [run(prefix, 8, system=[(["collective-simulation"], mode)], backend=backend)
               for mode in ("per-message", "symmetric")]
    assert results[0].summary["end_to_end_time_ns"] == results[1].summary["end_to_end_time_ns"]
    assert results[0].summary["events"] == results[1].summary["events"]
    assert results[0].tables["links"]["bytes"].tolist() == results[1].tables["links"]["bytes"].tolist()


def test_durations_in_microseconds_and_zero_as_one_ns_as_astra_sim_replays_them(tmp_path):
    npu = [chakra_node(0, "COMP", micros=3), chakra_node(1, "COMP", deps=[0]), comp(2, 0.5, deps=[1])]
    assert timings(run(write_traces(tmp_path, [npu, npu]))) == {0: (0, 3000), 1: (3000, 3001), 2: (3001, 3001.5)}


def test_metadata_and_invalid_nodes_finish_at_once(tmp_path):
    npu = [chakra_node(0, "METADATA"), chakra_node(1, "INVALID", deps=[0]), comp(2, 5, deps=[1])]
    assert timings(run(write_traces(tmp_path, [npu, npu]))) == {0: (0, 0), 1: (0, 0), 2: (0, 5)}


def test_roofline_times_compute_nodes_that_give_ops_and_bytes(tmp_path):
    # 1 TFLOPS = 1000 flops/ns, 100 GB/s = 100 bytes/ns
    system = [(["roofline-enabled"], 1), (["peak-perf"], 1), (["local-mem-bw"], 100)]
    npu = [comp(0, 7, num_ops=("int64_val", 10**6), tensor_size=("uint64_val", 1000)),  # compute bound
           comp(1, 7, deps=[0], num_ops=("int64_val", 1000), tensor_size=("uint64_val", 10**6)),  # memory bound
           comp(2, 7, deps=[1], num_ops=("int64_val", 1000), tensor_size=("uint64_val", 0)),  # skipped
           comp(3, 7, deps=[2]),  # no ops given: its duration
           comp(4, 7, deps=[3], num_ops=("int64_val", 10**9), tensor_size=("uint64_val", 1), is_cpu_op=("bool_val", True))]
    got = timings(run(write_traces(tmp_path, [npu, npu]), system=system))
    assert got == {0: (0, 1000), 1: (1000, 11000), 2: (11000, 11000), 3: (11000, 11007), 4: (11007, 11014)}


def test_roofline_needs_peak_and_bandwidth():
    with pytest.raises(ConfigError, match="roofline needs peak-perf"):
        load_system("default", [(["roofline-enabled"], 1)])


def test_send_and_receive_cross_the_network(tmp_path):
    # ring of 2 NPUs, 50 GB/s and 500 ns per link: a 4096 B message takes 500 + 4096 / 50 ns
    arrival = 1000 + 500 + 4096 / 50
    prefix = write_traces(tmp_path, [[comp(0, 1000), send(1, 1, 4096, 7, deps=[0])],
                                     [recv(0, 0, 4096, 7), comp(1, 10, deps=[0])]])
    result = run(prefix)
    assert timings(result, 1) == {0: (0, arrival), 1: (arrival, arrival + 10)}
    assert result.tables["npus"]["bytes_sent"].tolist() == [4096, 0]
    nodes = result.tables["nodes"]
    assert nodes[(nodes.npu == 1) & (nodes.node_id == 0)].exposed_comm_ns.item() == pytest.approx(arrival)


def test_a_send_finishes_on_delivery_and_a_late_receive_at_once(tmp_path):
    """ASTRA-sim's analytical backends: the sender's node ends when the message is delivered; a
    receive issued after the message arrived ends when it is issued."""
    arrival = 1000 + 500 + 4096 / 50
    prefix = write_traces(tmp_path, [[comp(0, 1000), send(1, 1, 4096, 7, deps=[0]), comp(2, 10, deps=[1])],
                                     [comp(0, 5000), recv(1, 0, 4096, 7, deps=[0]), comp(2, 10, deps=[1])]])
    result = run(prefix)
    assert timings(result, 0) == {0: (0, 1000), 1: (1000, arrival), 2: (arrival, arrival + 10)}
    assert timings(result, 1) == {0: (0, 5000), 1: (5000, 5000), 2: (5000, 5010)}


def test_exposed_communication_is_the_part_no_compute_hid(tmp_path):
    alone = run_collective(network(), load_system("default"), "all-reduce", MIB).summary["collective_time_ns"]
    npu = [coll(0), comp(1, 20_000)]
    result = run(write_traces(tmp_path, [npu, npu]))
    assert alone > 20_000
    assert timings(result)[0] == (0, alone)
    nodes = result.tables["nodes"]
    assert nodes[nodes.node_id == 0].exposed_comm_ns.tolist() == pytest.approx([alone - 20_000] * 2)
    assert result.summary["exposed_comm_time_ns"] == pytest.approx(alone - 20_000)
    assert result.summary["compute_comm_overlap_ns"] == 20_000


@pytest.mark.parametrize("kind", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"])
@pytest.mark.parametrize("system", ["default", "Ring_4chunks"])
def test_astra_sim_microbenchmark_traces_equal_netsim_collective(kind, system):
    net = load_network(RING8, [], "analytical")
    trace = run_trace(net, load_system(system), DATA / kind)
    alone = run_collective(net, load_system(system), kind.replace("_", "-"), MIB)
    assert trace.summary["end_to_end_time_ns"] == alone.summary["collective_time_ns"]
    assert trace.summary["npu_finish_time_ns"] == [alone.summary["collective_time_ns"]] * 8
    assert trace.tables["npus"].equals(alone.tables["npus"])
    assert trace.tables["links"]["bytes"].tolist() == alone.tables["links"]["bytes"].tolist()


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("kind, number", [("all-reduce", 0), ("all-gather", 2), ("reduce-scatter", 7),
                                          ("all-to-all", 6)])
def test_collective_only_traces_equal_netsim_collective_on_every_backend(tmp_path, backend, kind, number):
    net = load_network("torus-4x4", [], backend)
    per_npu = [[coll(npu, number, 64 << 10, involved_dim=("bool_list", [True, True]))] for npu in range(16)]
    trace = run_trace(net, load_system("default"), write_traces(tmp_path, per_npu))
    per_message = load_system("default", [(["collective-simulation"], "per-message")])  # as traces run
    alone = run_collective(net, per_message, kind, 64 << 10)
    assert trace.summary["end_to_end_time_ns"] == alone.summary["collective_time_ns"]
    assert trace.summary["events"] == alone.summary["events"]


def test_astra_sim_all_reduce_trace_equals_netsim_collective_on_the_packet_backend():
    net = load_network(RING8, [], "garnet")
    trace = run_trace(net, load_system("default"), DATA / "all_reduce")
    alone = run_collective(net, load_system("default"), "all-reduce", MIB)
    assert trace.summary["end_to_end_time_ns"] == alone.summary["collective_time_ns"]


def test_involved_dim_picks_the_dimensions_of_a_collective(tmp_path):
    per_npu = [[coll(0, 0, MIB, involved_dim=("bool_list", [False, True]))] for _ in range(16)]
    result = run(write_traces(tmp_path, per_npu), npus=16, dims=[4, 4])
    links = result.tables["links"]
    assert links[links.dim == 0]["bytes"].sum() == 0
    assert links[links.dim == 1]["bytes"].sum() > 0


def test_comm_groups_name_the_npus_of_a_collective(tmp_path):
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"1": [0, 1], "2": [2, 3]}))
    per_npu = [[coll(0, 0, MIB, pg_name=("string_val", "1" if npu < 2 else "2"))] for npu in range(4)]
    result = run(write_traces(tmp_path, per_npu), npus=4, comm_groups=load_comm_groups(groups))
    pair = run_collective(network(2), load_system("default"), "all-reduce", MIB).summary["collective_time_ns"]
    assert result.summary["npu_finish_time_ns"] == [pair] * 4
    assert result.tables["npus"]["bytes_sent"].sum() > 0


def memory(tmp_path, memory_type, **keys) -> MemoryConfig:
    path = tmp_path / "memory.json"
    path.write_text(json.dumps({"memory-type": memory_type, "remote-mem-latency": 100, "remote-mem-bw": 10, **keys}))
    return load_memory(path)


@pytest.mark.parametrize("memory_type, keys, ends", [
    ("PER_NPU_MEMORY_EXPANSION", {}, [200, 200, 200, 200]),
    ("PER_NODE_MEMORY_EXPANSION", {"num-nodes": 2, "num-npus-per-node": 2}, [200, 400, 200, 400]),
    ("MEMORY_POOL", {}, [200, 400, 600, 800]),
])
def test_remote_memory_serves_loads_and_stores_as_astra_sim_does(tmp_path, memory_type, keys, ends):
    # 1000 B at 10 GB/s after 100 ns: 200 ns per access; shared memories serve one access at a time
    per_npu = [[chakra_node(0, "MEM_LOAD" if npu % 2 else "MEM_STORE", tensor_size=("uint64_val", 1000))]
               for npu in range(4)]
    result = run(write_traces(tmp_path, per_npu), npus=4, memory=memory(tmp_path, memory_type, **keys))
    assert result.summary["npu_finish_time_ns"] == ends


def test_memory_nodes_need_a_remote_memory(tmp_path):
    per_npu = [[chakra_node(0, "MEM_LOAD", tensor_size=("uint64_val", 8))]] * 2
    prefix = write_traces(tmp_path, per_npu)
    with pytest.raises(ConfigError, match=r"trace\.0\.et: node 0 \('mem_load0'\): MEM_LOAD needs a remote memory"):
        run(prefix)
    with pytest.raises(ConfigError, match="says NO_MEMORY_EXPANSION"):
        run(prefix, memory=memory(tmp_path, "NO_MEMORY_EXPANSION"))


def test_a_trace_that_cannot_progress_says_which_nodes_wait_on_what(tmp_path):
    prefix = write_traces(tmp_path, [[recv(0, 1, 64, 1), send(1, 1, 64, 2, deps=[0])],
                                     [recv(0, 0, 64, 2), send(1, 0, 64, 1, deps=[0])]])
    with pytest.raises(DeadlockError) as error:
        run(prefix)
    message = str(error.value)
    assert "NPUs [0, 1] unfinished" in message
    assert "NPU 0 node 0 ('comm_recv0') (receive of 64 B from NPU 1, tag 1) started at 0.0 ns and never finished" \
        in message
    assert "NPU 0 node 1 ('comm_send1') waits for nodes [0]" in message


GRAPH_ERRORS = [
    ([comp(0, 1, deps=[9])], r"node 0 \('comp0'\) depends on node 9, which is not in the file"),
    ([comp(0, 1, deps=[1]), comp(1, 1, ctrl=[0])],
     r"dependency cycle: node 0 \('comp0'\) waits for node 1 \('comp1'\) waits for node 0 \('comp0'\)"),
    ([comp(0, 1), comp(0, 2)], r"node 0 \('comp0'\): node id 0 is used twice"),
    ([chakra_node(0, "COMP")] + [coll(1, 42)], r"node 1 \('comm_coll1'\): attribute 'comm_type': unknown collective 42"),
    ([chakra_node(0, "COMM_COLL", comm_type=("int64_val", 0))], r"node 0 \('comm_coll0'\): attribute 'comm_size' is missing"),
    ([chakra_node(0, "COMM_COLL", comm_type=("int64_val", 0), comm_size=("double_val", 1.5))],
     "attribute 'comm_size': expected an integer value"),
    ([coll(0, involved_dim=("int64_val", 1))], "attribute 'involved_dim': expected bool_list, got int64_val"),
    ([comp(0, -5)], "attribute 'duration_ns': expected a finite time from 0 to 1e\\+15 ns"),
    ([chakra_node(0, "COMM_SEND", comm_dst=("int32_val", 5), comm_size=("int64_val", 1), comm_tag=("int32_val", 0))],
     "attribute 'comm_dst': NPU 5 does not exist"),
    ([chakra_node(0, "COMM_SEND", comm_src=("int32_val", 1), comm_dst=("int32_val", 1), comm_size=("int64_val", 1),
                  comm_tag=("int32_val", 0))], "attribute 'comm_src' is 1, but this is NPU 0's file"),
    ([coll(0, pg_name=("string_val", "3"))], "communicator group '3' not found: give its NPUs with --comm-groups"),
]


@pytest.mark.parametrize("nodes, message", GRAPH_ERRORS)
def test_graph_errors_name_the_file_and_node(tmp_path, nodes, message):
    prefix = write_traces(tmp_path, [nodes, [comp(0, 1)]])
    with pytest.raises(ConfigError, match=message) as error:
        load_trace(prefix, network().build_topology())
    assert str(tmp_path / "trace.0.et") in str(error.value)
    assert "\n" not in str(error.value)


def test_unknown_node_type_is_an_error_naming_the_node(tmp_path):
    node = chakra_node(3, "COMP")
    node.type = 12
    prefix = write_traces(tmp_path, [[node], [comp(0, 1)]])
    with pytest.raises(ConfigError, match=r"trace\.0\.et: node 3 \('comp3'\): unknown node type 12"):
        load_trace(prefix, network().build_topology())


def test_involved_dim_needs_an_entry_per_dimension(tmp_path):
    prefix = write_traces(tmp_path, [[coll(0, involved_dim=("bool_list", [True]))]] * 4)
    with pytest.raises(ConfigError, match=r"'involved_dim' has 1 entries; the network has 2 dimensions \[2, 2\]"):
        load_trace(prefix, network(dims=[2, 2]).build_topology())


MATCHING_ERRORS = [
    ([[send(0, 1, 64, 3)], []], r"trace\.0\.et: node 0 \('comm_send0'\): send to NPU 1 with tag 3 has no matching "
                                r"receive in .*trace\.1\.et \(1 sends, 0 receives\)"),
    ([[], [recv(0, 0, 64, 3)]], r"trace\.1\.et: node 0 \('comm_recv0'\): receive from NPU 0 with tag 3 has no "
                                r"matching send in .*trace\.0\.et"),
    ([[send(0, 1, 64, 3)], [recv(0, 0, 32, 3)]], r"trace\.0\.et: node 0 \('comm_send0'\): sends 64 B to NPU 1 "
                                                 r"with tag 3, but .*trace\.1\.et: node 0 \('comm_recv0'\) expects 32 B"),
    ([[coll(0)], []], r"trace\.0\.et: node 0 \('comm_coll0'\): all-reduce of 1048576 B over NPUs \[0, 1\] has no "
                      r"counterpart in .*trace\.1\.et"),
    ([[coll(0, nbytes=8)], [coll(0, nbytes=16)]], r"all-reduce of 8 B over NPUs \[0, 1\] has no counterpart"),
]


@pytest.mark.parametrize("per_npu, message", MATCHING_ERRORS)
def test_mismatched_sends_receives_and_collectives_are_one_line_errors(tmp_path, per_npu, message):
    with pytest.raises(ConfigError, match=message) as error:
        load_trace(write_traces(tmp_path, per_npu), network().build_topology())
    assert "\n" not in str(error.value)


def test_trace_files_must_cover_exactly_the_npus(tmp_path):
    prefix = write_traces(tmp_path / "a", [[comp(0, 1)]] * 2)
    with pytest.raises(ConfigError, match=r"trace\.2\.et: workload file does not exist \(the network has 4 NPUs"):
        load_trace(prefix, network(4).build_topology())
    with pytest.raises(ConfigError, match=r"trace\.1\.et: rank 1 is not an NPU of the network \(1 NPUs"):
        load_trace(prefix, network(1).build_topology())
    write_traces(tmp_path / "a", [[comp(0, 1)]] * 2, name="other")
    with pytest.raises(ConfigError, match="holds the traces of 2 workloads"):
        load_trace(tmp_path / "a", network().build_topology())
    with pytest.raises(ConfigError, match="no Chakra trace files"):
        load_trace(tmp_path / "missing", network().build_topology())


def test_comm_group_file_errors_name_the_key(tmp_path):
    path = tmp_path / "groups.json"
    path.write_text(json.dumps({"0": [0, 1]}))
    with pytest.raises(ConfigError, match="key '0'.*expected a communicator group number >= 1"):
        load_comm_groups(path)
    path.write_text(json.dumps({"1": [0, 0]}))
    with pytest.raises(ConfigError, match="lists an NPU twice"):
        load_comm_groups(path)


def cli(*args, cwd=None):
    return subprocess.run([*netsim_command(), *args], capture_output=True, text=True, cwd=cwd)


def test_cli_runs_a_trace_folder_and_writes_nodes_csv(tmp_path):
    out = tmp_path / "out"
    done = cli("run", "--workload", str(DATA / "all_reduce"), "--network", str(RING8), "--out", str(out), "--json",
               "--quiet")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["workload"]["format"] == "chakra" and summary["workload"]["nodes"] == 8
    header = (out / "nodes.csv").read_text().splitlines()[0]
    assert header == "npu,node_id,name,type,collective,bytes,start_ns,end_ns,duration_ns,exposed_comm_ns"
    for table in ("summary.json", "npus.csv", "links.csv"):
        assert (out / table).is_file()


@pytest.mark.parametrize("extra, message", [
    (["--passes", "2"], "--passes 2: a Chakra trace runs its graph once"),
    (["--set", "workload.bucket-size=1MiB"], "--set workload.bucket-size: a Chakra trace takes one workload option"),
    (["--set", "workload.in-flight=-1"], "--set workload.in-flight: "),
])
def test_cli_trace_option_errors_are_one_line(extra, message):
    done = cli("run", "--workload", str(DATA / "all_reduce"), "--network", str(RING8), "--quiet", *extra)
    assert done.returncode == 2
    assert message in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_cli_reports_a_bad_trace_in_one_line(tmp_path):
    write_traces(tmp_path / "t", [[comp(0, 1, deps=[0])], [comp(0, 1)]])
    done = cli("run", "--workload", str(tmp_path / "t"), "--network", "ring-8", "--set", "topology.dims=[2]")
    assert done.returncode == 2
    assert "dependency cycle" in done.stderr and done.stderr.count("\n") == 1


def test_cli_trace_options_are_refused_for_other_workloads():
    done = cli("run", "--workload", "microAllReduce", "--memory", "m.json", "--quiet")
    assert done.returncode == 2
    assert "--memory applies to Chakra traces" in done.stderr


def test_a_stopped_run_reports_the_nodes_it_started(tmp_path):
    chain = [comp(0, 100)] + [coll(i, deps=[i - 1]) for i in range(1, 21)] + [comp(21, 5, deps=[20])]
    monitor = RunMonitor()
    monitor.interrupted = True  # as Ctrl-C: stop at the first check, a stride of events in
    result = run(write_traces(tmp_path, [chain] * 8), npus=8, monitor=monitor)
    assert result.summary["partial"] is True
    assert result.summary["npu_finish_time_ns"] == [None] * 8
    nodes = result.tables["nodes"]
    assert nodes[nodes.node_id == 0].end_ns.tolist() == [100] * 8
    assert nodes["end_ns"].isna().any() and 21 not in nodes.node_id.tolist()
