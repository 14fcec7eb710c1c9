"""The cluster fabrics: the k-ary n-tree fat-tree and the dragonfly wired link for link as BookSim's
`fattree` and `dragonflynew` (its link tables: tests/data/booksim2/wiring), their counts, bisection,
minimal routes, the dragonfly's VC classes, and their config errors."""

from pathlib import Path

import pandas as pd
import pytest

from netsim.errors import ConfigError, DeadlockError
from netsim.garnet.routing import ANY, HIGH, LOW, ROUTING
from netsim.app.traffic import run_synth
from tests.helpers import garnet, network_config

WIRING = Path(__file__).parents[1] / "data" / "booksim2" / "wiring"
BOOKSIM_FAT_TREE = {"kind": "fat-tree", "levels": 3, "radix": 4, "bandwidth": "16GB/s", "latency": "1ns"}
BOOKSIM_DRAGONFLY = {"kind": "dragonfly", "p": 2, "a": 4, "h": 2, "bandwidth": "16GB/s", "latency": "1ns",
                     "local_latency": "10ns", "global_latency": "100ns"}


def build(topology: dict, **garnet_keys):
    return network_config(topology, **garnet_keys).build_topology()


def router_links(topo):
    """(source router, destination router, link) of every router-to-router link, in BookSim's router ids."""
    return [(link.src - topo.npus, link.dst - topo.npus, link) for link in topo.links
            if topo.is_switch(link.src) and topo.is_switch(link.dst)]


# ------------------------------------------------------------------ fat-tree
def test_fat_tree_is_wired_as_booksims_4_ary_3_tree():
    topo = build(BOOKSIM_FAT_TREE)
    table = pd.read_csv(WIRING / "fattree_k4n3.csv")
    levels = {r: level for r, level in zip(table.src_router, table.src_level)}
    ours = {(u, v) for u, v, _ in router_links(topo)}
    assert ours == set(zip(table.src_router, table.dst_router))
    assert all((levels[u] > levels.get(v, levels[u] - 1)) == (d == "up") for u, v, d
               in zip(table.src_router, table.dst_router, table.direction) if v in levels)
    # leaf pos holds NPUs 4*pos .. 4*pos+3; leaves are level 2, ids 32..47
    assert all(topo.route(npu, (npu + 1) % 64)[1] == topo.npus + 32 + npu // 4 for npu in range(64))


def test_fat_tree_counts_bisection_routes():
    topo = build(BOOKSIM_FAT_TREE)
    assert (topo.npus, len(topo.switches), len(topo.links)) == (64, 48, 2 * 64 + 2 * 2 * 16 * 4)
    assert topo.diameter_hops == 6 == topo.routed_diameter()
    assert topo.bisection_bandwidth == pytest.approx(32 * 16)
    assert topo.direct_terminals  # (routes minimal: tests/network/test_topology.py, on the bundled fat-tree-64)
    # BookSim's closed form: routers traversed under uniform traffic average 4.375 (1, 3 or 5)
    routers = [len(topo.route(s, d)) - 2 for s in range(64) for d in range(64) if s != d]
    assert (sum(routers) + 64 * 1) / 64 ** 2 == pytest.approx(4.375)


def test_fat_tree_up_ports_d_mod_k_and_random():
    topo = build(BOOKSIM_FAT_TREE)
    # d-mod-k: every route to NPU 63 (digits 3, 3, 3) climbs through the parents of digit 3
    assert topo.route(0, 63) == (0, 64 + 32, 64 + 16 + 3, 64 + 15, 64 + 16 + 15, 64 + 32 + 15, 63)
    assert topo.tie_dims(0, 63) == 0
    spread = build({**BOOKSIM_FAT_TREE, "up_ports": "random"})
    assert spread.tie_dims(0, 63) == 0b1111 and spread.tie_dims(0, 5) == 0b11 and spread.tie_dims(0, 1) == 0
    assert spread.route(0, 63, 0) == topo.route(0, 63)
    roots = {spread.route(0, 63, ties)[3] for ties in range(16)}
    assert roots == set(range(64, 64 + 16))  # each of the 16 roots on one of the 16 draws


def test_fat_tree_oversubscription_tapers_each_level():
    topo = build({**BOOKSIM_FAT_TREE, "oversubscription": [2, 4]})
    bandwidth = {(topo.is_switch(l.src) and l.src - 64 < 16 or topo.is_switch(l.dst) and l.dst - 64 < 16,
                  topo.is_switch(l.src) and topo.is_switch(l.dst)): l.bandwidth for l in topo.links}
    assert bandwidth == {(False, False): 16, (False, True): 8, (True, True): 2}
    assert topo.bisection_bandwidth == pytest.approx(32 * 2)


def test_two_level_fat_tree_is_unchanged():
    topo = build({"kind": "fat-tree", "leaves": 4, "npus_per_leaf": 8, "spines": 8, "bandwidth": "50GB/s",
                  "latency": "500ns"})
    assert topo.route(0, 9) == (0, 32, 36 + 9 % 8, 33, 9) and not topo.direct_terminals


@pytest.mark.parametrize("keys, message", [
    ({"levels": 3, "radix": 4, "leaves": 2}, "not levels, radix, leaves together"),
    ({"levels": 3}, "missing radix"),
    ({"leaves": 2, "spines": 2}, "missing npus_per_leaf"),
    ({"levels": 3, "radix": 4, "oversubscription": [2]}, "lists 1 numbers for 3 levels"),
    ({"levels": 2, "radix": 3, "up_ports": "random"}, "power of two"),
    ({"levels": 2, "radix": 1}, "k >= 2"),
])
def test_fat_tree_config_errors_are_one_line(keys, message):
    with pytest.raises(ConfigError) as error:
        build({"kind": "fat-tree", "bandwidth": "1GB/s", "latency": "1ns", **keys})
    assert message in str(error.value) and "\n" not in str(error.value)


# ------------------------------------------------------------------ dragonfly
def test_dragonfly_is_wired_as_booksims_dragonflynew():
    topo = build(BOOKSIM_DRAGONFLY)
    table = pd.read_csv(WIRING / "dragonfly_k2.csv")
    ours = {(u, v, topo.graph.edges[link.src, link.dst]["tier"], link.latency) for u, v, link in router_links(topo)}
    assert ours == set(zip(table.src_router, table.dst_router, table.kind, table.latency.astype(float)))
    assert all(topo.route(npu, (npu + 2) % 72)[1] == topo.npus + npu // 2 for npu in range(72))


def test_dragonfly_counts_bisection_routes():
    topo = build(BOOKSIM_DRAGONFLY)
    assert (topo.npus, len(topo.switches)) == (72, 36)
    assert len(topo.links) == 2 * 72 + 36 * 3 + 36 * 2  # terminal pairs, 3 local and 2 global out of each router
    assert topo.diameter_hops == 5 == topo.routed_diameter()
    assert topo.bisection_bandwidth == pytest.approx(4 * 5 * 16)  # 4 groups against 5: 20 global links
    assert topo.summary()["link_groups"] == ["72 global (16 GB/s, 100 ns)", "108 local (16 GB/s, 10 ns)",
                                             "144 terminal (16 GB/s, 1 ns)"]  # as `netsim topo` lists them
    for src in range(72):  # minimal as BookSim's min: at most one local hop on each side of one global hop
        for dst in range(72):
            path = topo.route(src, dst)
            tiers = "".join(topo.graph.edges[u, v]["tier"][0] for u, v in zip(path, path[1:]))
            same_group = src // 8 == dst // 8
            assert tiers in (("", "tt", "tlt") if same_group else ("tgt", "tlgt", "tglt", "tlglt")), (src, dst, tiers)
            if not same_group:  # the local hop leads to the source group's router with the link to dst's group
                assert tiers.startswith("tlg") == (src // 2 != topo.dragonfly.exit_router(src // 8, dst // 8))
    # BookSim's closed form over all pairs: T0 = 4(H+1) + sum of link latencies + 3 + (L-1) = 122.28 for L = 4
    total = 0.0
    for s in range(72):
        for d in range(72):
            inner = topo.route(s, d)[1:-1]  # the routers (a packet to itself crosses its own)
            total += 4 * max(1, len(inner)) + sum(topo.link(u, v).latency for u, v in zip(inner, inner[1:])) + 3 + 3
    assert total / 72 ** 2 == pytest.approx(122.28, abs=0.005)


def test_dragonfly_min_vc_classes_switch_at_the_global_link():
    config = network_config(BOOKSIM_DRAGONFLY, vcs=2)
    assert config.garnet.routing == "dragonfly-min"  # the dragonfly's own, by default
    topo = config.build_topology()
    unit = ROUTING["dragonfly-min"](topo, seed=0)
    path = topo.route(0, 71)  # local, global, local between the routers
    links = [topo.link(u, v).id for u, v in zip(path, path[1:])]
    assert [topo.graph.edges[u, v]["tier"] for u, v in zip(path, path[1:])] == \
        ["terminal", "local", "global", "local", "terminal"]
    assert unit.hop_classes(links)[1:4] == [LOW, HIGH, HIGH]
    assert ROUTING["dragonfly-min"](topo, seed=0, dateline=False).hop_classes(links) == [ANY] * 5
    with pytest.raises(ConfigError, match="2 VCs"):
        garnet(network_config(BOOKSIM_DRAGONFLY, vcs=1))


def test_dragonfly_routing_must_be_its_own():
    with pytest.raises(ConfigError, match="garnet.routing.*dragonfly-min or ugal on a dragonfly"):
        network_config(BOOKSIM_DRAGONFLY, routing="dor")
    ring = {"kind": "torus", "dims": [4], "bandwidth": "1GB/s", "latency": "1ns"}
    with pytest.raises(ConfigError, match="garnet.routing.*dor, dor-booksim, adaptive or valiant on a torus"):
        network_config(ring, routing="dragonfly-min")
    with pytest.raises(ConfigError, match="routes a dragonfly, not a torus"):  # the unit itself refuses too
        ROUTING["dragonfly-min"](network_config(ring).build_topology(), seed=0)


# ------------------------------------------------------------------ rail-optimized cluster
RAIL = {"kind": "rail", "servers": 4, "gpus_per_server": 4, "bandwidth": "50GB/s", "latency": "500ns",
        "scale_up_bandwidth": "400GB/s", "scale_up_latency": "100ns", "servers_per_leaf": 2, "spines": 2}


def test_rail_cluster_counts_bisection_and_dimensions():
    topo = build(RAIL)
    # 4 scale-up switches, 4 rails of 2 leaves, 2 spines; links: scale-up, NIC, leaf-spine pairs
    assert (topo.npus, len(topo.switches)) == (16, 4 + 8 + 2)
    assert len(topo.links) == 2 * 16 + 2 * 16 + 2 * 8 * 2
    assert topo.diameter_hops == 6 == topo.routed_diameter()
    # half the servers against the rest: per rail one leaf's 2 uplinks of 2 x 50 / 2 GB/s each
    assert topo.bisection_bandwidth == pytest.approx(4 * 1 * 2 * 50)
    assert [(d.kind, d.size, d.bandwidth) for d in topo.dims] == [("switch", 4, 400), ("switch", 4, 50)]
    assert topo.peers(5, 1) == [1, 5, 9, 13]  # GPU 1 of every server: rail 1


def test_rail_routes_change_rails_inside_the_server_then_follow_the_rail():
    topo = build(RAIL)
    scale_up, leaf, spine = 16, 20, 28  # first node of each switch kind: rail g's leaves are 20 + 2g, 21 + 2g
    assert topo.route(0, 3) == (0, scale_up, 3)  # same server
    assert topo.route(0, 4) == (0, leaf, 4)  # GPU 0 of server 1: same rail, same leaf
    assert topo.route(0, 8) == (0, leaf, spine + 2 % 2, leaf + 1, 8)  # server 2: the rail's other leaf, spine 2 mod 2
    assert topo.route(0, 14) == (0, scale_up, 2, leaf + 4, spine + 3 % 2, leaf + 5, 14)  # GPU 2 of server 3
    assert topo.link(0, scale_up).bandwidth == 400 and topo.link(leaf, spine).bandwidth == 50


def test_rail_mesh_inside_and_oversubscription():
    topo = build({**RAIL, "scale_up": "mesh", "oversubscription": 2})
    assert len(topo.switches) == 8 + 2 and topo.route(0, 14) == (0, 2, 16 + 4, 16 + 8 + 1, 16 + 5, 14)
    assert topo.dims[0].kind == "fully-connected" and topo.link(0, 3).bandwidth == 400
    assert topo.link(16, 24).bandwidth == 2 * 50 / (2 * 2)  # 2 servers down, 2 spines up, 2:1
    assert topo.diameter_hops == 5 == topo.routed_diameter()
    one_leaf = build({**RAIL, "servers_per_leaf": 0, "spines": 0})
    assert one_leaf.route(0, 12) == (0, 16 + 4 + 0, 12) and one_leaf.bisection_bandwidth == 8 * 50


@pytest.mark.parametrize("keys, message", [
    ({"servers_per_leaf": 3}, "servers_per_leaf = 3 does not divide servers = 4"),
    ({"spines": 0}, "a rail of 2 leaves needs spines"),
    ({"servers_per_leaf": 4}, "each rail has one leaf"),
    ({"scale_up": "ring"}, "expected one of switch, mesh"),
])
def test_rail_config_errors_are_one_line(keys, message):
    with pytest.raises(ConfigError) as error:
        build({**RAIL, **keys})
    assert message in str(error.value) and "\n" not in str(error.value)


def test_dragonfly_min_classes_keep_a_saturated_dragonfly_moving():
    """Past saturation (uniform at 0.9 flits/node/cycle, a third beyond what it accepts), one VC on
    every hop deadlocks within a few hundred cycles; dragonfly-min's two classes keep it moving."""
    small = {"kind": "dragonfly", "p": 2, "a": 2, "h": 1, "bandwidth": "16GB/s", "latency": "1ns"}

    def run(vcs, **options):
        config = network_config(small, clock_ghz=1.0, flit_bytes=16, vcs=vcs, buffer_flits=4, deadlock_cycles=500)
        return run_synth(config, "uniform", 0.9, 4, 1200, seed=1, warmup_cycles=200, network_options=options)

    with pytest.raises(DeadlockError):
        run(1, dateline=False)  # the test-only switch: every hop any VC
    result = run(2)
    assert result["accepted_load"] > 0.2 and not result["warnings"]
