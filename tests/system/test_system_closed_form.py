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
def test_direct_window_keeps_window_messages_awaited(window):
    """Each handled arrival lets the next message go; on a switch every message takes as long, so the
    messages go in rounds of `window`."""
    net, size = analytical("switch-16"), 16 * 4096
    rounds = math.ceil(15 / window)
    expected = E + rounds * (net_time(net, 0, 1, size // 16) + E)
    assert run(net, "all-to-all", size, f"direct{window}") == pytest.approx(expected)


def test_direct_window_from_the_config_key():
    net, size = analytical("switch-16"), 16 * 4096
    expected = E + 8 * (net_time(net, 0, 1, size // 16) + E)
    assert run(net, "all-to-all", size, "direct", direct_collective_window=2) == pytest.approx(expected)


def test_ring_all_to_all_forwards_every_block_hop_by_hop():
    """ASTRA-sim's ring all-to-all: p(p-1)/2 steps of one block to the next rank."""
    net, size = analytical("ring-8"), 8 * 4096
    steps = 8 * 7 // 2
    assert run(net, "all-to-all", size, "ring") == pytest.approx(E + steps * (net_time(net, 0, 1, size // 8) + E))
    assert net.bytes_sent == [steps * size // 8] * 8
    assert sum(net.link_bytes) == 8 * steps * size // 8  # every message crosses one link


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
    """ASTRA-sim's first tree on 16 NPUs: root 15 over the in-order tree of 0..14 (root 7, leaves the
    even ranks), so the deepest leaf is 4 hops below the root; a leaf starts with one endpoint
    delay and every node handles each arrival with one."""
    net, size = analytical("switch-16"), 2**20
    assert run(net, "all-reduce", size, "double-binary-tree") == pytest.approx(E + 8 * (net_time(net, 0, 1, size) + E))
    assert sum(net.bytes_sent) == 2 * 15 * size
    assert net.bytes_sent[0] == size and net.bytes_sent[15] == size  # a leaf sends up, the root down to its one child
    assert net.bytes_sent[7] == 3 * size  # the inner root: up to 15, down to 3 and 11


def test_double_binary_tree_alternates_trees_between_chunks():
    net, size = analytical("switch-16"), 2**20
    run(net, "all-reduce", size, "double-binary-tree", preferred_dataset_splits=2)
    # NPU 0 is a leaf of tree one and the root of tree two, NPU 15 the other way round
    assert net.bytes_sent[0] == net.bytes_sent[15] == size


@pytest.mark.parametrize("npus, hops, astra_reductions, physical_reductions", [(16, 8, 7, 7), (6, 6, 5, 4)])
def test_tree_reductions_under_both_accountings(npus, hops, astra_reductions, physical_reductions):
    """On the deepest leaf's path ASTRA-sim charges every node going up one reduction (its children's
    messages reduce in parallel) and every inner node going down another; the physical accounting
    reduces one child's message after the other and only forwards on the way down. On 16 NPUs
    (every inner node has two children) the two come to the same; on 6 (tree 5-2-{1-0, 4-3}) the
    inner nodes 1 and 4 have one child, so ASTRA-sim charges one reduction more."""
    reduction = 3 * 2**20 / 100.0
    for accounting, reductions in (("astra-sim", astra_reductions), ("physical", physical_reductions)):
        net = analytical("switch-16", npus=npus)
        total = run(net, "all-reduce", 2**20, "double-binary-tree", local_mem_bw="100GB/s",
                    collective_accounting=accounting)
        assert total == pytest.approx(E + hops * (net_time(net, 0, 1, 2**20) + E) + reductions * reduction)


@pytest.mark.parametrize("accounting, reductions", [("astra-sim", 1), ("physical", 15)])
def test_direct_reduce_scatter_reduces_its_arrivals_in_parallel_or_one_after_another(accounting, reductions):
    """ASTRA-sim handles each of the p-1 arrivals on its own (they reduce at once); the physical
    accounting's local memory reduces them one after another."""
    net, size = analytical("switch-16"), 16 * 4096
    reduction = 3 * (size // 16) / 100.0
    assert run(net, "reduce-scatter", size, "direct", local_mem_bw="100GB/s", collective_accounting=accounting) == \
        pytest.approx(2 * E + net_time(net, 0, 1, size // 16) + reductions * reduction)


@pytest.mark.parametrize("accounting, reduced", [("astra-sim", 2), ("physical", 3)])
def test_windowed_direct_reduce_scatter_charges_reductions_as_astra_sim_counts_them(accounting, reduced):
    """8 NPUs, window 3: arrivals come in runs of 3, and ASTRA-sim reduces only the runs 1-3 and 7
    (its packet counters alternate); the phase's critical path has three arrivals."""
    net, size = analytical("switch-16", npus=8), 8 * 4096
    reduction = 3 * (size // 8) / 100.0
    assert run(net, "reduce-scatter", size, "direct3", local_mem_bw="100GB/s", collective_accounting=accounting) == \
        pytest.approx(4 * E + 3 * net_time(net, 0, 1, size // 8) + reduced * reduction)


@pytest.mark.parametrize("accounting, reduced", [("astra-sim", [4, 8]), ("physical", [2, 4, 8])])
def test_halving_doubling_reduce_scatter_charges(accounting, reduced):
    """ASTRA-sim charges a halving step the reduction of the message it sends next (D/4 after D/2,
    D/8 after D/4) and the last step none; the physical accounting reduces what arrived."""
    net, size = analytical("switch-16", npus=8), 8 * 8192
    steps = sum(net_time(net, 0, 1, size // k) + E for k in (2, 4, 8))
    assert run(net, "reduce-scatter", size, "halving-doubling", local_mem_bw="100GB/s",
               collective_accounting=accounting) == \
        pytest.approx(E + steps + sum(3 * (size // k) / 100.0 for k in reduced))


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
