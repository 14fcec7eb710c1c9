"""Every algorithm on the analytical backend against its closed form, and its traffic against its formula.

One chunk, endpoint delay E, net(m) = hops * latency + m / B (the backend's `message_time`).
"""

import math

import pytest

from tests.helpers import analytical, systems_for

E = 10.0
ALGORITHM_KEY = {"all-reduce": "all_reduce_implementation", "reduce-scatter": "reduce_scatter_implementation",
                 "all-gather": "all_gather_implementation", "all-to-all": "all_to_all_implementation"}


def run(net, kind, nbytes, algorithm=None, **system):
    system.setdefault("endpoint_delay", E)
    system.setdefault("preferred_dataset_splits", 1)
    if algorithm:
        system[ALGORITHM_KEY[kind]] = algorithm
    systems = systems_for(net, **system)
    events = [s.collective(kind, nbytes) for s in systems]
    net.run()
    assert all(e.processed for e in events)
    return max(e.value.finished_at for e in events)


def net_time(net, src, dst, nbytes):
    return net.message_time(src, dst, nbytes)


def test_direct_all_to_all_is_two_endpoint_delays_and_one_message():
    net, size = analytical("switch-16"), 16 * 4096
    assert run(net, "all-to-all", size, "direct") == pytest.approx(2 * E + net_time(net, 0, 1, size // 16))
    assert net.bytes_sent == [15 * size // 16] * 16


@pytest.mark.parametrize("window", [1, 4, 15])
def test_direct_window_runs_rounds_of_window_messages(window):
    net, size = analytical("switch-16"), 16 * 4096
    rounds = math.ceil(15 / window)
    expected = E + rounds * (net_time(net, 0, 1, size // 16) + E)
    assert run(net, "all-to-all", size, f"direct{window}") == pytest.approx(expected)


def test_direct_window_from_the_config_key():
    net, size = analytical("switch-16"), 16 * 4096
    expected = E + 8 * (net_time(net, 0, 1, size // 16) + E)
    assert run(net, "all-to-all", size, "direct", direct_collective_window=2) == pytest.approx(expected)


def test_ring_all_to_all_takes_p_minus_1_steps_of_growing_distance():
    net, size = analytical("ring-8"), 8 * 4096
    expected = E + sum(net_time(net, 0, s, size // 8) + E for s in range(1, 8))
    assert run(net, "all-to-all", size, "ring") == pytest.approx(expected)


def test_direct_all_reduce_is_a_direct_reduce_scatter_then_all_gather():
    net, size = analytical("switch-16"), 16 * 4096
    assert run(net, "all-reduce", size, "direct") == pytest.approx(E + 2 * (net_time(net, 0, 1, size // 16) + E))
    assert net.bytes_sent == [2 * 15 * size // 16] * 16


@pytest.mark.parametrize("network", ["ring-8", "switch-16"])
def test_halving_doubling_all_reduce_is_the_sum_of_its_steps(network):
    net = analytical(network)
    p = net.topology.npus
    size = p * 8192
    halving = [(p >> (k + 1), size >> (k + 1)) for k in range(int(math.log2(p)))]  # (distance, bytes)
    steps = halving + halving[::-1]
    expected = E + sum(net_time(net, 0, distance, nbytes) + E for distance, nbytes in steps)
    assert run(net, "all-reduce", size, "halving-doubling") == pytest.approx(expected)
    assert net.bytes_sent == [2 * (p - 1) * size // p] * p  # the same traffic as ring


def test_halving_doubling_reduce_scatter_and_all_gather():
    net, size = analytical("ring-8"), 8 * 8192
    rs = [(4, size // 2), (2, size // 4), (1, size // 8)]
    assert run(net, "reduce-scatter", size, "halving-doubling") == pytest.approx(
        E + sum(net_time(net, 0, d, b) + E for d, b in rs))
    net = analytical("ring-8")
    shard = 4096
    ag = [(1, shard), (2, 2 * shard), (4, 4 * shard)]
    assert run(net, "all-gather", shard, "halving-doubling") == pytest.approx(
        E + sum(net_time(net, 0, d, b) + E for d, b in ag))
    assert net.bytes_sent == [7 * shard] * 8


def test_recursive_doubling_all_reduce_sends_everything_every_step():
    net, size = analytical("ring-8"), 8 * 8192
    expected = E + sum(net_time(net, 0, d, size) + E for d in (1, 2, 4))
    assert run(net, "all-reduce", size, "recursive-doubling") == pytest.approx(expected)
    assert net.bytes_sent == [3 * size] * 8


def test_non_power_of_two_all_reduce_folds_the_extra_ranks():
    net, size = analytical("switch-16", npus=6), 6 * 4096
    step = lambda nbytes: net_time(net, 0, 1, nbytes) + E  # noqa: E731 (every pair is alike on a switch)
    # fold (whole buffer), halving over 4 ranks (parts 6 -> 3 -> 1 or 2), doubling back, unfold
    unit = size // 6
    expected = E + step(size) + step(3 * unit) + step(2 * unit) + step(2 * unit) + step(3 * unit) + step(size)
    assert run(net, "all-reduce", size, "halving-doubling") == pytest.approx(expected)


def test_double_binary_tree_all_reduce_climbs_and_descends_the_tree():
    net, size = analytical("switch-16"), 2**20
    depth = int(math.log2(16))  # the heap over 16 positions has its deepest leaf at depth 4
    assert run(net, "all-reduce", size, "double-binary-tree") == pytest.approx(
        E + 2 * depth * (net_time(net, 0, 1, size) + E))
    assert sum(net.bytes_sent) == 2 * 15 * size
    assert net.bytes_sent[0] == 2 * size and net.bytes_sent[15] == size  # root sends down, leaf up


def test_double_binary_tree_alternates_trees_between_chunks():
    net, size = analytical("switch-16"), 2**20
    run(net, "all-reduce", size, "double-binary-tree", preferred_dataset_splits=2)
    # NPU 0 is the root of tree one and a leaf of tree two, NPU 15 the other way round
    assert net.bytes_sent[0] == net.bytes_sent[15] == 2 * (size // 2) + size // 2


@pytest.mark.parametrize("algorithm", ["direct", "halving-doubling", "double-binary-tree"])
def test_k_chunks_with_one_active_chunk_take_k_times_one_chunk(algorithm):
    size = 16 * 4 * 4096
    one = run(analytical("switch-16"), "all-reduce", size // 4, algorithm)
    four = run(analytical("switch-16"), "all-reduce", size, algorithm, preferred_dataset_splits=4)
    assert four == pytest.approx(4 * one)


def test_local_memory_bandwidth_adds_three_accesses_per_reduced_byte():
    net, size = analytical("ring-8"), 8 * 2**16
    slice_ = size // 8
    expected = E + 7 * (net_time(net, 0, 1, slice_) + E + 3 * slice_ / 100.0)
    assert run(net, "reduce-scatter", size, local_mem_bw="100GB/s") == pytest.approx(expected)


def test_one_ring_runs_one_ring_over_every_npu():
    net, size = analytical("torus-4x4"), 16 * 4096
    t = run(net, "all-reduce", size, "one-ring")
    # 30 steps of D/16 between consecutive ranks; the 4 -> 5 style hops cross one link, 3 -> 4 wraps a row
    assert net.bytes_sent == [2 * 15 * size // 16] * 16
    assert t > E + 30 * (net_time(net, 0, 1, size // 16) + E) - 1e-6


def test_localbwaware_and_baseline_differ_in_traffic_on_two_dimensions():
    size = 16 * 2**16
    local = analytical("torus-4x4")
    run(local, "all-reduce", size, "halving-doubling")
    base = analytical("torus-4x4")
    run(base, "all-reduce", size, "halving-doubling", collective_optimization="baseline")
    assert local.bytes_sent[0] == 2 * 3 * size // 4 + 2 * 3 * size // 16
    assert base.bytes_sent[0] == 2 * (2 * 3 * size // 4)


def test_hierarchical_all_to_all_moves_all_data_per_dimension():
    net, size = analytical("torus-4x4"), 16 * 4096
    run(net, "all-to-all", size, "direct")
    assert net.bytes_sent == [2 * 3 * size // 4] * 16


def _wire_bytes_cases():
    from system.algorithms import ALGORITHMS, ROOTED_ALGORITHM

    rooted = {kind: name for kind, name in ROOTED_ALGORITHM.items()}
    for name, algorithm in ALGORITHMS.items():
        for op in sorted(algorithm.ops):
            if op in rooted and rooted[op] != name:
                continue  # rooted collectives always run their fixed algorithm
            for size in (2, 3, 4, 5, 6, 8):
                if algorithm.supports(op, size):
                    yield name, op, size


@pytest.mark.parametrize("name, op, size", list(_wire_bytes_cases()))
def test_planned_bytes_are_the_bytes_sent(name, op, size):
    """Every algorithm's closed form of the bytes a phase sends (the progress total) is exactly
    what its messages carry, for odd sizes, uneven splits and several chunks."""
    from netsim.analytical import AnalyticalNetwork
    from netsim.config import Source
    from netsim.network_config import parse_network_table
    from system import build_systems, load_system
    from system.collectives import DIMENSIONAL

    config = parse_network_table({"topology": {"kind": "switch", "npus": size, "bandwidth": "50GB/s",
                                               "latency": "100ns"}}, Source("test"), "test")
    network = AnalyticalNetwork(config.build_topology())
    overrides = [(["preferred-dataset-splits"], 3)]
    if op in DIMENSIONAL:
        overrides.append(([f"{op}-implementation"], name))
    systems = build_systems(network, load_system("default", overrides))
    nbytes = 0 if op == "barrier" else 4099
    planned = systems[0].planned_bytes(op, nbytes, group=tuple(range(size)))
    for system in systems:
        system.collective(op, nbytes, group=tuple(range(size)))
    network.run()
    records = [system.records[0] for system in systems]
    assert all(record.finished_at > 0 or op == "barrier" for record in records)
    assert sum(record.planned_bytes for record in records) == pytest.approx(sum(network.bytes_sent), rel=1e-12)
    assert planned == pytest.approx(records[0].planned_bytes)
