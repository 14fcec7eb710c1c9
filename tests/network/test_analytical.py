"""Analytical backend: ASTRA-sim's cost model, and ASTRA-sim's own network files with its units."""

import pytest

from netsim.analytical import AnalyticalNetwork
from netsim.errors import ConfigError
from netsim.network_config import load_network
from tests.helpers import analytical


def test_ring_neighbour_is_one_hop_and_one_serialization():
    net = analytical("ring-8")
    assert net.message_time(0, 1, 5000) == pytest.approx(500 + 5000 / 50)
    assert net.message_time(0, 3, 5000) == pytest.approx(3 * 500 + 5000 / 50)
    assert net.message_time(0, 7, 5000) == pytest.approx(500 + 5000 / 50)  # wrap-around


def test_switch_is_two_hops_and_one_serialization():
    net = analytical("switch-16")
    assert net.message_time(0, 9, 5000) == pytest.approx(2 * 500 + 5000 / 50)


def test_fully_connected_peer_is_one_hop():
    net = analytical("dgx-8x4")
    assert net.message_time(0, 7, 1500) == pytest.approx(100 + 1500 / 150)


def test_multi_dimension_route_serializes_on_the_slowest_link():
    net = analytical("dgx-8x4")
    # 0 -> 9: one fully-connected hop (100 ns), then through a switch (2 x 500 ns); bottleneck 50 GB/s
    assert net.message_time(0, 9, 1000) == pytest.approx(100 + 1000 + 1000 / 50)


def test_messages_never_interfere():
    net = analytical("ring-8")
    done = []
    for tag in range(10):
        net.endpoint(1).recv(0, 10_000, tag).callbacks.append(lambda _e: done.append(net.env.now))
        net.endpoint(0).send(1, 10_000, tag)
    net.run()
    assert done == [pytest.approx(500 + 10_000 / 50)] * 10


def test_link_bytes_count_every_link_of_the_route():
    net = analytical("torus-4x4")
    net.endpoint(10).recv(0, 777, 0)
    net.endpoint(0).send(10, 777, 0)
    net.run()
    links = net.link_stats()
    assert links["bytes"].sum() == 777 * 4
    assert (links["bytes"] > 0).sum() == 4


def test_astra_yaml_bandwidth_is_read_as_gib(astra_sim_inputs):
    config = load_network(astra_sim_inputs / "v2/network/analytical/Ring_8npus.yml")
    net = AnalyticalNetwork(config.build_topology())
    bandwidth = 50 * 2**30 / 1e9
    assert net.message_time(0, 1, 2**20) == pytest.approx(500 + 2**20 / bandwidth)


def test_astra_legacy_json_reads_gib_times_links_and_adds_router_latency(astra_sim_inputs):
    """ASTRA-sim v1 reads link-bandwidth as GiB/s and multiplies a switch's by its links-count (1)."""
    config = load_network(astra_sim_inputs / "network/analytical/sample_Switch.json")
    net = AnalyticalNetwork(config.build_topology())
    assert net.message_time(0, 3, 1000) == pytest.approx(2 * 500 + 1000 / (25 * 2**30 / 1e9) + 10)


def test_every_astra_network_sample_loads(astra_sim_inputs):
    files = sorted((astra_sim_inputs / "network/analytical").glob("*.json"))
    files += sorted((astra_sim_inputs / "v2/network/analytical").glob("*.yml"))
    assert len(files) == 9
    for path in files:
        if path.name == "sample_Ring_FullyConnected_Ring.json":  # a 1-link ring: ASTRA-sim v1 stops on it too
            with pytest.raises(ConfigError, match="links-count"):
                load_network(path)
            continue
        topology = load_network(path).build_topology()
        assert topology.npus >= 4


@pytest.mark.parametrize("backend", ["analytical", "congestion-aware", "garnet"])
def test_route_ties_are_broken_alike_on_every_backend(backend):
    """An all-to-all on a 4x4 torus has antipode ties (2 hops either way): every backend breaks
    them at random per message from the seed, so + and - links carry about the same bytes; with
    ASTRA-sim's rule (`route_ties = "positive"`, set for its files) they all go the + way."""
    from netsim.backends import create_network

    def plus_minus(rule: str) -> tuple[int, int]:
        config = load_network("torus-4x4", overrides=[(["route_ties"], rule)])
        net = create_network(backend, config.build_topology(), config=config, seed=3)
        topo = net.topology
        for src in range(16):
            for dst in range(16):
                if src != dst:
                    net.endpoint(src).send(dst, 4096, "a2a")
                    net.endpoint(dst).recv(src, 4096, "a2a")
        net.run()
        plus = minus = 0
        for row in net.link_stats().itertuples():
            a, b = topo.coords(row.src)[row.dim], topo.coords(row.dst)[row.dim]
            if (b - a) % 4 == 1:
                plus += row.bytes
            else:
                minus += row.bytes
        return plus, minus

    plus, minus = plus_minus("random")
    # each tie sends its 2 hops of 4096 bytes the + or the - way: a fair coin per tie leaves
    # plus - minus within 3 standard deviations, 3 x 8192 x sqrt(ties), of 0
    topo = load_network("torus-4x4").build_topology()
    ties = sum(bin(topo.tie_dims(s, d)).count("1") for s in range(16) for d in range(16))
    assert abs(plus - minus) <= 3 * 8192 * ties ** 0.5 < ties * 8192  # (all one way would fail it)
    plus, minus = plus_minus("positive")
    assert plus == 3 * minus  # per dimension: a 1-hop route each way, and the 2-hop tie both + hops
