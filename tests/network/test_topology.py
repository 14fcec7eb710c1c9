"""Topology builders: node and link counts, diameter, bisection bandwidth and routes for each kind."""

import pytest

from netsim.network_config import load_network


def topo(name, **overrides):
    return load_network(name, [(["topology", k], v) for k, v in overrides.items()]).build_topology()


@pytest.mark.parametrize("name, npus, switches, links, diameter, bisection", [
    ("ring-8", 8, 0, 16, 4, 2 * 50),                  # cut a ring: 2 links each way
    ("torus-4x4", 16, 0, 64, 4, 2 * 4 * 50),          # 4 rings cut, 2 links each
    ("torus-8x8", 64, 0, 256, 8, 2 * 8 * 50),
    ("torus-2x4x4", 32, 0, 16 * 2 + 32 * 2 * 2, 5, min(1 * 16 * 200, 2 * 8 * 50)),  # size-2 dim: one link pair
    ("switch-16", 16, 1, 32, 2, 8 * 50),              # half the NPUs' uplinks
    ("fat-tree-32", 32, 12, 2 * 32 + 2 * 4 * 8, 4, 16 * 50),
    ("fat-tree-64", 64, 48, 2 * 64 + 2 * 2 * 16 * 4, 6, 32 * 50),  # 4-ary 3-tree: 4 links down per switch
    ("dragonfly-72", 72, 36, 2 * 72 + 36 * (3 + 2), 5, 4 * 5 * 50),  # 4 groups against 5: 20 global links
    # 16 servers of 8 GPUs: 16 scale-up switches, 8 rails of 2 leaves, 8 spines; half the servers: 8 rails x 8 uplinks
    ("rail-128", 128, 40, 2 * 128 + 2 * 128 + 2 * 16 * 8, 6, min(64 * 50, 8 * 8 * 50)),
    # 4 fully-connected groups of 8 (56 directed links each) + 8 rank switches with 4 link pairs each
    ("dgx-8x4", 32, 8, 4 * 56 + 8 * 4 * 2, 3, min(4 * 4 * 4 * 150, 2 * 8 * 50)),
])
def test_counts_diameter_bisection(name, npus, switches, links, diameter, bisection):
    t = topo(name)
    assert t.npus == npus
    assert len(t.switches) == switches
    assert len(t.links) == links
    assert t.diameter_hops == diameter == t.routed_diameter()
    assert t.bisection_bandwidth == pytest.approx(bisection)


def test_every_link_is_directed_and_paired():
    for name in ("torus-2x4x4", "switch-16", "fat-tree-32", "dgx-8x4"):
        t = topo(name)
        pairs = {(link.src, link.dst) for link in t.links}
        assert all((v, u) in pairs for u, v in pairs), name


def test_routes_are_minimal_and_follow_links():
    for name in ("torus-4x4", "torus-2x4x4", "fat-tree-32", "fat-tree-64", "dgx-8x4", "switch-16"):
        t = topo(name)
        import networkx as nx

        lengths = dict(nx.all_pairs_shortest_path_length(t.graph))
        for src in range(t.npus):
            for dst in range(t.npus):
                path = t.route(src, dst)
                assert path[0] == src and path[-1] == dst
                assert all(t.graph.has_edge(u, v) for u, v in zip(path, path[1:]))
                assert len(path) - 1 == lengths[src][dst], (name, src, dst)


def test_torus_routes_dimension_order_shorter_way():
    t = topo("torus-4x4")
    # 0=(0,0) -> 10=(2,2): x first (tie goes +), then y
    assert t.route(0, 10) == (0, 1, 2, 6, 10)
    assert t.route(0, 3) == (0, 3)  # wrap-around is shorter


def test_dimension_structure_dim0_fastest():
    t = topo("torus-2x4x4")
    assert t.dim_sizes == (2, 4, 4)
    assert t.coords(13) == (1, 2, 1)
    assert t.peers(13, 0) == [12, 13]
    assert t.peers(13, 1) == [9, 11, 13, 15]
    assert t.peers(13, 2) == [5, 13, 21, 29]


def test_hierarchical_switch_level_has_one_switch_per_group():
    t = topo("dgx-8x4")
    assert len(t.route(0, 8)) == 3  # through the rank-0 switch
    assert t.route(0, 8)[1] == t.route(16, 24)[1]
    assert t.route(1, 9)[1] != t.route(0, 8)[1]


def test_ring_of_any_dimension_count():
    t = topo("torus-4x4", dims=[3, 2, 2, 2])
    assert t.npus == 24 and len(t.dims) == 4


@pytest.mark.parametrize("dims", [[5], [2, 3], [3, 4, 2], [1, 6]])
def test_closed_form_diameter_equals_routed_diameter_on_odd_and_mixed_tori(dims):
    t = topo("torus-4x4", dims=dims)
    assert t.diameter_hops == t.routed_diameter()


def test_pair_draws_are_the_hash_of_seed_pair_and_count():
    """A pair's k-th draw is mix64(seed, src, dst, k) (route ties and per-packet routes rely on it:
    independent of the order events of one instant run in), whatever the other pairs drew between."""
    from netsim.topology.base import PairDraws, mix64

    draws = PairDraws(7)
    got = {(3, 5): [], (5, 3): []}
    for pair in [(3, 5), (5, 3), (3, 5), (3, 5), (5, 3)]:
        got[pair].append(draws.next(*pair))
    assert got[(3, 5)] == [mix64(7, 3, 5, k) for k in range(3)]
    assert got[(5, 3)] == [mix64(7, 5, 3, k) for k in range(2)]
    assert mix64(7, 3, 5, 0) != mix64(7, 5, 3, 0)  # (a pair is ordered)
