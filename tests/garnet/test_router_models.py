"""Router models (`garnet.allocator`) and routing units (`garnet.routing`): VC turnaround against
each model's closed form, equal shares per input port under Garnet's model, VC selection that
spreads packets over VCs, seeded tie-breaking on even rings, and one-line errors."""

from __future__ import annotations

import pytest

from netsim.errors import ConfigError
from netsim.garnet.allocators import ALLOCATORS
from netsim.garnet.routing import ROUTING
from netsim.network_config import load_network
from netsim.app.traffic import SynthRun, run_synth
from tests.helpers import garnet, network_config, systems_for

NOC = {"bandwidth": "16GB/s", "latency": "1ns"}  # 16-byte flits at 1 GHz: one flit per cycle, 1-cycle links


def noc(topology: dict, **options):
    return network_config({**topology, **NOC}, **{"clock_ghz": 1.0, "flit_bytes": 16, "nic_ports": "single", **options})


def stream_cycles(config, packets: int, packet_flits: int) -> int:
    """Cycles until a message of `packets` packets from NPU 0 to NPU 1 has arrived."""
    net = garnet(config, check_invariants=True)
    done = []
    net.endpoint(0).send(1, packets * packet_flits * 16, "m")
    net.endpoint(1).recv(0, packets * packet_flits * 16, "m").callbacks.append(lambda _e: done.append(net.clock.cycle))
    net.run()
    net.check_drained()
    return done[0]


@pytest.mark.parametrize("allocator, extra", [("garnet", 0), ("booksim", 1)])
@pytest.mark.parametrize("packet_flits", [1, 4])
def test_vc_turnaround_equals_the_closed_form(allocator, extra, packet_flits):
    """One VC per port, tail-credit release, one flow over one router-to-router hop: a VC is reused
    every L + 2 x link + router_latency cycles under Garnet's model (the tail leaves downstream
    `link + router_latency` after it left upstream; its credit is usable upstream `link + 1` later)
    and one cycle more under BookSim's (the waiting head runs VC allocation, then switch
    allocation). 1-flit packets: 7 and 8 cycles, 4-flit: 10 and 11 (BookSim2 measured 8 and 11)."""
    config = noc({"kind": "torus", "dims": [2]}, vcs=1, buffer_flits=8, router_latency=4, allocator=allocator,
                 packet_bytes=16 * packet_flits, vc_release="tail-credit")
    period = stream_cycles(config, 40, packet_flits) - stream_cycles(config, 20, packet_flits)
    assert period == 20 * (packet_flits + 2 * 1 + 4 + extra)


@pytest.mark.parametrize("fidelity", ["flit", "packet"])
@pytest.mark.parametrize("vc_release", ["tail-credit", "tail-sent"])
def test_garnet_model_gives_each_input_port_an_equal_share(fidelity, vc_release):
    """Two equal flows merge at router 1 of a 4-ring: one from its NIC (4 VCs), one through from
    router 0 (2 VCs of its dateline class). Garnet's SA-II takes turns between input ports, so
    both finish together (turns over VCs finished the NIC's flow a third sooner)."""
    config = noc({"kind": "torus", "dims": [4]}, vcs=4, buffer_flits=8, packet_bytes=128, fidelity=fidelity,
                 vc_release=vc_release)
    net = garnet(config, check_invariants=True)
    finish = {}
    for src in (0, 1):
        net.endpoint(src).send(2, 2**16, src)
        net.endpoint(2).recv(src, 2**16, src).callbacks.append(lambda _e, src=src: finish.setdefault(src, net.env.now))
    net.run()
    assert finish[0] == pytest.approx(finish[1], rel=0.02)
    assert min(finish.values()) > 1.8 * 2**16 / 16  # both at about half the link's rate until the end


def test_tail_sent_release_lets_a_lone_flow_use_every_vc():
    """Under tail-sent release a VC takes the next packet once the last tail left: taking the same
    VC again would cap a lone flow at one VC's credit loop (4 flits per 7 cycles here). Packets
    spread over the 4 VCs instead, and the flow runs at a flit per cycle."""
    config = noc({"kind": "torus", "dims": [2]}, vcs=4, buffer_flits=4, router_latency=1, packet_bytes=64,
                 vc_release="tail-sent")
    cycles = stream_cycles(config, 200, 4) - stream_cycles(config, 100, 4)
    assert cycles == 100 * 4


def test_more_vcs_raise_switch_saturation_under_tail_sent_release():
    """The bundled 16-port switch (tail-sent release, 25-cycle links) with 4-flit buffers: a VC
    carries 4 flits per credit round trip of ~54 cycles, so the throughput an input port reaches
    under overload grows with its VCs: 2 < 4 < 8 (about 0.1, 0.23, 0.49 flits per node per cycle)."""
    accepted = []
    for vcs in (2, 4, 8):
        config = load_network("switch-16", overrides=[(["garnet", "vcs"], vcs), (["garnet", "buffer_flits"], 4)])
        assert config.garnet.vc_release == "tail-sent"
        accepted.append(run_synth(config, "uniform", 0.6, 4, 1500, 1)["accepted_load"])
    assert 0.08 < accepted[0] < 0.8 * accepted[1] < 0.8 * 0.8 * accepted[2]


def test_uniform_traffic_loads_plus_and_minus_links_alike():
    """On an even ring the antipode is as near either way: ties are broken at random per message,
    so the + and - links of an 8x8 torus carry uniform traffic alike (within 3%)."""
    config = noc({"kind": "torus", "dims": [8, 8]}, vcs=4, buffer_flits=4, packet_bytes=64)
    net = run_synth_network(config)
    links = net.link_stats()
    topo = net.topology
    plus = minus = 0
    for row in links.itertuples():
        a, b = topo.coords(row.src)[row.dim], topo.coords(row.dst)[row.dim]
        if (b - a) % 8 == 1:
            plus += row.bytes
        else:
            minus += row.bytes
    assert abs(plus - minus) <= 0.03 * (plus + minus) / 2


def run_synth_network(config):
    run = SynthRun(config, "uniform", 0.2, 4, 3000, 1, None)
    run.execute()
    return run.network


def all_to_all(seed: int):
    config = noc({"kind": "torus", "dims": [4, 4]}, vcs=4, buffer_flits=8, packet_bytes=128)
    net = garnet(config, check_invariants=True, seed=seed)
    for system in systems_for(net, all_to_all_implementation=["direct", "direct"]):
        system.all_to_all(16 * 1024)
    net.run()
    net.check_drained()
    return net.env.now, net.link_stats()["bytes"].tolist()


def test_seeds_give_different_equally_valid_results_and_the_same_seed_the_same_bits():
    """An all-to-all on a 4x4 torus has antipode ties: the seed decides them."""
    first, again, other = all_to_all(1), all_to_all(1), all_to_all(2)
    assert first == again
    assert first != other
    assert sum(first[1]) == sum(other[1])  # the same bytes, over other links
    assert first[0] == pytest.approx(other[0], rel=0.1)


def test_booksim_model_needs_its_pipeline_stages():
    with pytest.raises(ConfigError, match="router_latency must be at least 3"):
        garnet(noc({"kind": "torus", "dims": [4]}, allocator="booksim", router_latency=2))


@pytest.mark.parametrize("key, value", [("allocator", "islip"), ("routing", "west-first")])
def test_unknown_models_are_one_line_errors(key, value):
    with pytest.raises(ConfigError, match=f"garnet.{key}"):
        noc({"kind": "torus", "dims": [4]}, **{key: value})


def test_registries_name_every_model():
    assert set(ALLOCATORS) == {"garnet", "booksim"}
    assert set(ROUTING) == {"dor", "dor-booksim", "dragonfly-min",  # dragonfly-min: tests/network/test_cluster_topologies.py
                            "ecmp", "spray", "adaptive", "valiant", "romm", "xy-yx", "ugal"}  # tests/garnet/test_multipath_routing.py


@pytest.mark.parametrize("allocator", ["garnet", "booksim"])
@pytest.mark.parametrize("routing", ["dor", "dor-booksim"])
def test_every_model_runs_synthetic_traffic_with_invariants(allocator, routing):
    config = noc({"kind": "torus", "dims": [4, 4]}, vcs=2, buffer_flits=4, packet_bytes=64, router_latency=4,
                 allocator=allocator, routing=routing)
    result = run_synth(config, "uniform", 0.4, 4, 600, 1, network_options={"check_invariants": True})
    assert result["drained"] and result["accepted_load"] > 0.3
