"""Routing units beyond dimension order (netsim/garnet/routing/): ECMP collides where spraying and
adaptive routing do not, every unit stays deadlock-free past saturation on its bundled network,
out-of-order packets still complete their message, the other backends follow ECMP's paths, and
the optimisations (batching, fast-forward, the compiled core) do not change results."""

from __future__ import annotations

import pytest

from netsim.analytical import AnalyticalNetwork
from netsim.congestion_aware import CongestionAwareNetwork
from netsim.errors import ConfigError
from netsim.network_config import load_network
from netsim.app.traffic import run_synth
from tests.helpers import garnet, network_config

# 16 NPUs: a 4-ary 2-tree, 4 leaves of 4 NPUs, 4 roots, non-blocking (every NPU's link is a leaf's
# uplink's bandwidth); 1 GHz cycles of one 16-byte flit
TREE = {"kind": "fat-tree", "levels": 2, "radix": 4, "bandwidth": "16GB/s", "latency": "1ns"}
# leaf 0's NPUs all send to leaf 1's: four flows over leaf 0's four uplinks (d-mod-k gives each its
# own; a flow hash puts two on one uplink for most seeds)
CROWDED = [(0, 4), (1, 5), (2, 6), (3, 7)]
# one flow out of and into each leaf: no two flows can share a link, whatever their paths
APART = [(0, 4), (4, 8), (8, 12), (12, 0)]
FLOW_BYTES = 32 * 1024


def flows_time(routing: str, flows, seed: int = 0, **garnet_keys) -> float:
    """ns until the last of `flows` (equal messages, all sent at once) has arrived."""
    net = garnet(network_config(TREE, routing=routing, **garnet_keys), seed=seed, check_invariants=True)
    done = []
    for i, (src, dst) in enumerate(flows):
        net.endpoint(src).send(dst, FLOW_BYTES, i)
        net.endpoint(dst).recv(src, FLOW_BYTES, i).callbacks.append(lambda _e: done.append(net.env.now))
    net.run()
    net.check_drained()
    assert len(done) == len(flows)
    return max(done)


def ecmp_paths_collide(seed: int) -> bool:
    """Do two of the crowded flows hash onto one uplink (the first message of each pair)?"""
    topo = network_config(TREE).build_topology()
    ties = topo.tie_breaker(seed, multipath=True)
    roots = [topo.route(src, dst, ties.ties(src, dst))[2] for src, dst in CROWDED]
    return len(set(roots)) < len(roots)


def test_ecmp_collisions_cost_what_spraying_and_adaptive_routing_avoid():
    spray = flows_time("spray", CROWDED)
    adaptive = flows_time("adaptive", CROWDED)
    ideal = flows_time("dor", CROWDED)  # d-mod-k: this permutation's perfect assignment
    collided = [seed for seed in range(8) if ecmp_paths_collide(seed)]
    clear = [seed for seed in range(8) if seed not in collided]
    assert collided and clear  # (seeds 0-7 give both kinds)
    for seed in collided[:2]:  # two flows on one uplink at half rate: about twice as long
        collision = flows_time("ecmp", CROWDED, seed)
        assert collision > 1.8 * ideal and collision > max(spray, adaptive)
    assert flows_time("ecmp", CROWDED, clear[0]) == ideal
    assert adaptive < 1.1 * ideal
    # a random path per packet queues packets on the uplinks at random (with buffers of a credit
    # round trip, head-of-line blocking at the leaf costs a third of the rate), yet beats a collision
    assert spray < 1.8 * ideal


@pytest.mark.parametrize("seed", [0, 1])
def test_flows_that_share_no_link_take_as_long_under_every_routing(seed):
    times = {routing: flows_time(routing, APART, seed) for routing in ("dor", "ecmp", "spray", "adaptive")}
    assert len(set(times.values())) == 1, times


def test_sprayed_packets_arrive_out_of_order_and_complete_their_message():
    net = garnet(network_config(TREE, routing="spray"), check_invariants=True)
    overtaken = []  # a message's last packet arrived before some of its others
    net.packet_observer = lambda packet, cycle: overtaken.append(packet.last and packet.msg.packets_out > 1)
    done = []
    for i, (src, dst) in enumerate([(0, 4), (1, 4), (2, 4), (8, 5), (12, 6)]):  # paths queue unequally
        net.endpoint(src).send(dst, FLOW_BYTES, i)
        net.endpoint(dst).recv(src, FLOW_BYTES, i).callbacks.append(lambda _e: done.append(net.env.now))
    net.run()
    net.check_drained()
    assert len(done) == 5 and any(overtaken)


# every bundled network with each routing unit its kind offers beyond dimension order, past saturation
DEADLOCK_CASES = [("fat-tree-64", routing) for routing in ("ecmp", "spray", "adaptive")] + \
                 [("rail-128", routing) for routing in ("ecmp", "spray", "adaptive")] + \
                 [("mesh-8x8-noc", routing) for routing in ("adaptive", "valiant", "romm", "xy-yx")] + \
                 [("torus-8x8-noc", routing) for routing in ("adaptive", "valiant")] + [("dragonfly-72", "ugal")]


@pytest.mark.parametrize("network, routing", DEADLOCK_CASES, ids=[f"{n}-{r}" for n, r in DEADLOCK_CASES])
def test_every_routing_is_deadlock_free_past_saturation(network, routing):
    """Offered 1.0 flits/node/cycle, long past saturation; the detector checks every 100 cycles for
    VCs that waited 400 (a deadlock, total or partial, is an error)."""
    overrides = [(["garnet", "routing"], routing), (["garnet", "deadlock_cycles"], 400)]
    if routing == "ugal":
        overrides.append((["garnet", "vcs"], 3))
    config = load_network(network, overrides)
    pattern = "bad-dragon" if routing == "ugal" else "uniform"
    summary = run_synth(config, pattern, 1.0, 4, 1200, 1, warmup_cycles=200)
    assert summary["accepted_load"] > 0.02  # saturated, still delivering


def test_each_kind_refuses_the_units_that_would_deadlock_there():
    with pytest.raises(ConfigError, match="garnet.routing.*on a torus"):
        load_network("torus-4x4", [(["garnet", "routing"], "romm")])
    with pytest.raises(ConfigError, match="garnet.routing.*on a fat-tree"):
        load_network("fat-tree-64", [(["garnet", "routing"], "valiant")])
    with pytest.raises(ConfigError, match="garnet.vcs = 2: ugal routing needs >= 3 VCs"):
        garnet(load_network("dragonfly-72", [(["garnet", "routing"], "ugal"), (["garnet", "vcs"], 2)]))


def test_the_other_backends_follow_ecmp_and_split_for_spray():
    config = network_config(TREE, routing="ecmp")
    topo = config.build_topology()
    for backend in (AnalyticalNetwork, CongestionAwareNetwork):
        net = backend(topo, config=config, seed=3)
        for i, (src, dst) in enumerate(CROWDED):
            net.endpoint(src).send(dst, FLOW_BYTES, i)
            net.endpoint(dst).recv(src, FLOW_BYTES, i)
        net.run()
        links = net.link_stats()
        packet = garnet(config, seed=3)
        for i, (src, dst) in enumerate(CROWDED):
            packet.endpoint(src).send(dst, FLOW_BYTES, i)
            packet.endpoint(dst).recv(src, FLOW_BYTES, i)
        packet.run()
        assert (links.bytes > 0).tolist() == (packet.link_stats().bytes > 0).tolist()  # the same links
    split = network_config(TREE, routing="spray")
    net = AnalyticalNetwork(topo, config=split)
    net.endpoint(0).send(4, FLOW_BYTES, 0)
    net.run()
    up = net.link_stats().set_index(["src", "dst"]).bytes
    assert [up[20, 16 + root] for root in range(4)] == [FLOW_BYTES // 4] * 4  # leaf 0 to every root
    assert "splits each message evenly" in net.warnings[0]
    mesh = network_config({"kind": "mesh", "dims": [4, 4], "bandwidth": "16GB/s", "latency": "1ns"}, routing="valiant")
    assert "sends each message on its minimal route" in CongestionAwareNetwork(mesh.build_topology(),
                                                                              config=mesh).warnings[0]


@pytest.mark.parametrize("network, routing", [("fat-tree-64", "adaptive"), ("fat-tree-64", "ecmp"),
                                              ("mesh-8x8-noc", "xy-yx"), ("fat-tree-64", "spray")])
def test_optimisations_do_not_change_results(network, routing):
    """Fast-forward (kept for units without per-packet draws) and batching (kept for units that
    look routes up) give the results a plain run gives."""
    config = load_network(network, [(["garnet", "routing"], routing)])

    def run(**options):
        net = garnet(config, **options)
        for src in range(0, 16, 3):
            net.endpoint(src).send(src + 17, 200_000, src)
            net.endpoint(src + 17).recv(src, 200_000, src)
        net.run()
        return net.env.now, net.link_stats().bytes.tolist(), net.packet_stats.summary()

    assert run() == run(fast_forward=False, batch=False)
