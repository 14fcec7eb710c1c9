"""The symmetric fast path (system.symmetric) against the per-message reference.

Each case runs one collective twice, with `collective-simulation = "symmetric"` (one representative
NPU stands for all when the check proves them alike) and `"per-message"` (every NPU runs every
message), and requires the same results: the collective time and every phase time bit for bit,
the same bytes per link and per NPU, and busy times equal up to float rounding. Cases: every
bundled network x algorithm x collective, and every ASTRA-sim sample of tests/data/astra-sim-2x on
its own files, on both analytical backends (congestion-unaware and congestion-aware); and on the packet
backend, which sends every member's copy and compares their arrivals (netsim.garnet.shortcuts.mirrored).
"""

import csv
from pathlib import Path

import pytest

from netsim.backends import create_network
from netsim.errors import ConfigError, MirrorMismatch, PartitionConflict
from netsim.network_config import load_network
from netsim.network_plan import plan_network
from netsim.app.progress import RunMonitor
from netsim.app.runner import _attempts, collective_phases, run_collective
from system import build_systems, load_system
from tests.helpers import analytical

DATA = Path(__file__).parents[1] / "data" / "astra-sim-2x"
TOPOLOGIES = Path(__file__).parents[2] / "topologies"
NETWORKS = sorted(p.stem for p in TOPOLOGIES.glob("*.toml") if not p.stem.endswith("-noc"))
ALGORITHMS = {"ring": ("all-reduce", "reduce-scatter", "all-gather", "all-to-all"),
              "direct": ("all-reduce", "reduce-scatter", "all-gather", "all-to-all"),
              "halving-doubling": ("all-reduce", "reduce-scatter", "all-gather"),
              "double-binary-tree": ("all-reduce",), "one-ring": ("all-reduce",)}
MODES = ("per-message", "symmetric")
BACKENDS = ("analytical", "congestion-aware")


def both_ways(network, system, kind: str, nbytes: int, overrides=(), backend: str = "analytical"):
    """The two runs' results, reference first."""
    results = []
    for mode in MODES:
        config = load_system(system, [*overrides, (["collective-simulation"], mode)])
        results.append(run_collective(load_network(network, backend=backend), config, kind, nbytes))
    return results


def assert_same(reference, fast):
    assert fast.summary["collective_time_ns"] == reference.summary["collective_time_ns"]
    assert fast.summary["bytes_sent_total"] == reference.summary["bytes_sent_total"]
    assert fast.tables["detailed"].equals(reference.tables["detailed"])
    assert fast.tables["npus"].equals(reference.tables["npus"])
    links, expected = fast.tables["links"], reference.tables["links"]
    assert links["bytes"].tolist() == expected["bytes"].tolist()
    assert links["busy_time_ns"].tolist() == pytest.approx(expected["busy_time_ns"].tolist(), rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("network", NETWORKS)
def test_every_bundled_network_algorithm_and_collective(network, backend):
    used = 0
    for algorithm, kinds in ALGORITHMS.items():
        for kind in kinds:
            overrides = [([f"{kind}-implementation"], algorithm)]
            try:
                reference, fast = both_ways(network, "Ring_4chunks", kind, 3 * 2**20 + 7, overrides, backend)
            except ConfigError:  # the algorithm cannot run there (group size); the same both ways
                continue
            assert_same(reference, fast)
            used += fast.summary["events"] < reference.summary["events"]
    # where every dimension is a homogeneous ring (or, without queues on links, also a switch or
    # fully-connected one), ring at least runs as one NPU; not on the fat-trees, rail cluster and
    # dragonfly, whose routes differ pair by pair (their NPUs are not alike: per message, same results)
    fabrics = ("fat-tree", "rail", "dragonfly")
    if network.startswith(("ring", "torus")) or (backend == "analytical" and not network.startswith(fabrics)):
        assert used > 0


def astra_rows():
    """Each sample once per input (the reference rows repeat them per ASTRA-sim backend; the 64 MiB and
    1 GiB files repeat the 1 MiB inputs at larger sizes, which take no other path)."""
    seen = set()
    for path in (DATA / "collectives-1MiB.csv", DATA / "collectives-extra.csv"):
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                key = (row["network_file"], row["system_file"], row["collective"], row["size_bytes_per_npu"])
                if key not in seen:
                    seen.add(key)
                    yield pytest.param(row, id=f"{path.stem[12:]}-{row['system_variant']}-{row['topology']}-"
                                               f"{row['collective']}-{row['algorithm']}-{row['size_bytes_per_npu']}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("row", list(astra_rows()))
def test_astra_sim_samples(row, backend):
    assert_same(*both_ways(DATA / row["network_file"], DATA / row["system_file"], row["collective"].replace("_", "-"),
                           int(row["size_bytes_per_npu"]), backend=backend))


def test_the_fast_path_runs_one_npu_on_a_ring():
    reference, fast = both_ways("ring-16", "default", "all-reduce", 2**20)
    assert fast.summary["events"] * 8 < reference.summary["events"]


def test_staggered_members_run_per_message():
    """Members that issue at different times are not alike: every NPU runs its own messages."""
    times = {}
    for mode in MODES:
        network = analytical("ring-8")
        systems = build_systems(network, load_system("default", [(["collective-simulation"], mode)]))
        events = []

        def late(system):
            yield network.env.timeout(5.0 * system.npu)
            record = yield system.all_reduce(2**20)
            events.append(record.finished_at)

        for system in systems:
            network.env.process(late(system))
        network.run()
        times[mode] = (sorted(events), network.events)
    assert times["symmetric"] == times["per-message"]


def test_a_collective_issued_during_a_symmetric_one_is_refused():
    network = analytical("ring-8")
    systems = build_systems(network, load_system("default"))
    for system in systems:
        system.all_reduce(2**20)

    def later():
        yield network.env.timeout(100.0)
        systems[3].all_reduce(2**10)

    network.env.process(later())
    with pytest.raises(ConfigError, match="collective-simulation"):
        network.run()


def all_reducing(backend: str, network_name: str, mode: str):
    """A network and its Systems, every NPU having issued a 1 MiB all-reduce (not yet run)."""
    network = create_network(backend, load_network(network_name).build_topology())
    systems = build_systems(network, load_system("default", [(["collective-simulation"], mode)]))
    for system in systems:
        system.all_reduce(2**20)
    return network, systems


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_backend_counters_read_directly_after_a_run_match(backend):
    """Scripts read link_bytes and bytes_sent off the backend: they hold every member's traffic."""
    counters = []
    for mode in MODES:
        network, systems = all_reducing(backend, "torus-4x4", mode)
        network.run()
        counters.append((network.link_bytes, network.bytes_sent, network.bytes_received, network.events))
    assert counters[0][:3] == counters[1][:3] and counters[1][3] < counters[0][3]


def test_a_message_sent_during_a_symmetric_congestion_aware_collective_is_refused():
    """Its links stand for the other members' links: a message of another sender would meet none of the
    traffic it should queue behind, so the run stops with the one-line error instead."""
    network = create_network("congestion-aware", load_network("ring-8").build_topology())
    systems = build_systems(network, load_system("default"))
    for system in systems:
        system.all_reduce(2**20)

    def later():
        yield network.env.timeout(1000.0)
        network.endpoint(2).send(3, 2**22, "beside")

    network.env.process(later())
    with pytest.raises(ConfigError, match="NPU 2: a message to NPU 3 sent while a symmetric collective runs"):
        network.run()


def test_a_symmetric_collective_after_other_traffic_runs_per_message_on_the_congestion_aware_backend():
    """Mirroring would overwrite the earlier message's link counters (and its links' busy time): the
    collective runs message by message, with the reference's results."""
    results = []
    for mode in MODES:
        network = create_network("congestion-aware", load_network("ring-8").build_topology())
        systems = build_systems(network, load_system("default", [(["collective-simulation"], mode)]))
        network.endpoint(2).send(3, 2**22, "before")
        network.endpoint(3).recv(2, 2**22, "before")
        network.env.run(until=10.0)  # the message is on its way; the simulation has not `started`
        events = [system.all_reduce(2**20) for system in systems]
        network.run()
        results.append(([event.value.finished_at for event in events], list(network.link_bytes)))
    assert results[0] == results[1]


def test_point_to_point_messages_beside_a_symmetric_analytical_collective_keep_the_results():
    """On the congestion-unaware backend messages never meet: a send beside the collective is allowed."""
    results = []
    for mode in MODES:
        network = analytical("ring-8")
        systems = build_systems(network, load_system("default", [(["collective-simulation"], mode)]))
        events = [system.all_reduce(2**20) for system in systems]
        network.endpoint(2).send(3, 2**22, "beside")
        received = network.endpoint(3).recv(2, 2**22, "beside")
        network.run()
        network.flush_orbits()
        results.append(([event.value.finished_at for event in events], network.env.now, received.triggered,
                        list(network.link_bytes), list(network.bytes_received)))
    assert results[0] == results[1]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("network_name", ["ring-8", "torus-4x4x4", "dgx-8x4"])
def test_reading_the_counters_midway_does_not_change_the_results(backend, network_name):
    """The live view reads the link counters at moments of wall time: a run read every 137 ns or
    every 3333.3 ns ends with the link bytes and busy times of a run never read, bit for bit."""
    results = []
    for period in (None, 137.0, 3333.3):
        network, _systems = all_reducing(backend, network_name, "symmetric")
        read_at = period
        while period and network.env.peek() < float("inf"):
            network.run(until=read_at)
            network.link_counters()  # as the live view reads them
            network.bytes_sent  # (a read that folds the pending orbits in)
            read_at += period
        network.run()
        network.flush_orbits()
        results.append((list(network.link_bytes), list(network.link_busy_ns), list(network.bytes_sent)))
    assert results[1] == results[0] and results[2] == results[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("until", [3000.0, 20000.0, 40000.0])
def test_a_run_stopped_midway_reports_what_the_reference_reports(backend, until):
    """Every member's record shows the representative's phases as they run, and a mirrored message's
    bytes reach its receivers' counters when it arrives: a partial run's detailed rows and per-NPU
    bytes (also `bytes_sent` read directly, as progress does) are the per-message run's."""
    results = []
    for mode in MODES:
        network, systems = all_reducing(backend, "ring-8", mode)
        network.run(until=until)
        sent = list(network.bytes_sent)  # as the progress view reads it mid-run, before any flush
        results.append((collective_phases([system.records[0] for system in systems]), network.npu_stats(),
                        network.messages_delivered, sent))
    (phases, npus, delivered, sent), (phases_s, npus_s, delivered_s, sent_s) = results
    assert phases.equals(phases_s) and npus.equals(npus_s) and delivered == delivered_s and sent == sent_s
    assert phases["finished_at_ns"].isna().any()  # stopped midway


PACKET_NETWORKS = ["ring-8", "torus-4x4", "torus-2x4x4", "switch-16", "dgx-8x4"]


def packet_run(network: str, kind: str, algorithm: str, fidelity: str, mode: str):
    config = load_system("Ring_4chunks", [([f"{kind}-implementation"], algorithm), (["collective-simulation"], mode)])
    return run_collective(load_network(network, backend="garnet", overrides=[(["garnet", "fidelity"], fidelity)]),
                          config, kind, 2**16 + 7)


def packet_both_ways(network: str, kind: str, algorithm: str, fidelity: str):
    """The two runs' results on the packet backend, reference first."""
    return [packet_run(network, kind, algorithm, fidelity, mode) for mode in MODES]


def assert_same_packets(reference, fast):
    """The packet backend's results both ways: bit for bit, busy times too (every copy crosses its links)."""
    assert_same(reference, fast)
    assert fast.tables["links"].equals(reference.tables["links"])
    assert fast.tables["packet_latency"].equals(reference.tables["packet_latency"])
    assert not any("simulated again" in warning for warning in fast.summary["warnings"])


@pytest.mark.parametrize("network", PACKET_NETWORKS)
def test_the_packet_backend_sends_every_copy_with_the_reference_results(network):
    """Every member's copy of the representative's messages goes through the routers: same results as
    every NPU running its own messages, on every algorithm and collective that runs there."""
    used = 0
    for algorithm, kinds in ALGORITHMS.items():
        for kind in kinds:
            try:
                reference, fast = packet_both_ways(network, kind, algorithm, "packet")
            except ConfigError:
                continue
            assert_same_packets(reference, fast)
            used += fast.summary["events"] < reference.summary["events"]
    assert used > 0


@pytest.mark.parametrize("network, algorithm, fidelity", [("torus-2x4x4", "ring", "flit"), ("dgx-8x4", "ring", "flit"),
                                                          ("fat-tree-32", "halving-doubling", "packet")])
def test_more_copies_keep_the_reference_results(network, algorithm, fidelity):
    reference, fast = packet_both_ways(network, "all-reduce", algorithm, fidelity)
    assert_same_packets(reference, fast)
    assert fast.summary["events"] < reference.summary["events"]


def test_a_message_beside_a_symmetric_packet_collective_that_delays_some_copies_is_caught():
    """A point-to-point message on one ring link delays the copies that share it: the run stops with
    MirrorMismatch (the runner's signal to simulate it again per message) instead of going on wrong."""
    network = create_network("garnet", load_network("ring-8").build_topology())
    systems = build_systems(network, load_system("default"))
    for system in systems:
        system.all_reduce(2**20)
    network.endpoint(2).post(3, 2**20, "beside")
    network.endpoint(3).recv(2, 2**20, "beside")
    with pytest.raises(MirrorMismatch, match="symmetric run: NPU \\d+'s message to NPU \\d+ arrived in cycle"):
        network.run()


def test_the_runner_simulates_again_per_message_when_copies_arrive_apart():
    """_attempts: an attempt that raised MirrorMismatch is run again with symmetric collectives off, and
    the summary's warnings say so (once)."""
    calls = []

    def attempt(symmetric: bool, plan):
        calls.append(symmetric)
        if symmetric:
            raise MirrorMismatch("symmetric run: NPU 3's message to NPU 4 arrived in cycle 9, the other members' "
                                 "copies of it in cycle 8")
        monitor.note("a budget warning")  # given again by the second attempt: kept once
        return "the per-message result"

    monitor = RunMonitor()
    monitor.note("a budget warning")
    assert _attempts(attempt, plan_network(load_network("torus-4x4"), "a test"), monitor) == "the per-message result"
    assert calls == [True, False]
    assert monitor.notes == ["a budget warning", "symmetric run: NPU 3's message to NPU 4 arrived in cycle 9, "
                             "the other members' copies of it in cycle 8: simulated again per message"]


def test_the_runner_simulates_again_with_the_whole_network_fast_forward_after_a_partition_conflict():
    """_attempts: an attempt whose fast-forward per partition met a conflict (PartitionConflict) is run
    again with garnet.fast_forward = 'network' (still symmetric), then per message if that mismatches."""
    calls = []

    def attempt(symmetric: bool, plan):
        calls.append((symmetric, plan.config.garnet.fast_forward))
        if plan.config.garnet.fast_forward == "partitions":
            raise PartitionConflict("a message 1->2 started in cycle 5 through a port whose partition was "
                                    "fast-forwarded to cycle 9")
        if symmetric:
            raise MirrorMismatch("copies apart")
        return "the result"

    monitor = RunMonitor()
    assert _attempts(attempt, plan_network(load_network("torus-4x4"), "a test"), monitor) == "the result"
    assert calls == [(True, "partitions"), (True, "network"), (False, "network")]
    assert monitor.notes == ["a message 1->2 started in cycle 5 through a port whose partition was fast-forwarded "
                             "to cycle 9: simulated again with garnet.fast_forward = 'network'",
                             "copies apart: simulated again per message"]