"""Packet backend: zero-load closed form, agreement with the analytical backend, conservation,
determinism, config errors and the ASTRA-sim Garnet reader."""

from __future__ import annotations

import random

import pytest

from netsim.analytical import AnalyticalNetwork
from netsim.errors import ConfigError
from netsim.garnet.network import GarnetNetwork
from netsim.network_config import load_network
from tests.helpers import closed_form_cycles, garnet, network_config, one_message



# Small networks with 16 GB/s links at 1 GHz and 16-byte flits (cpf 1) unless noted.
NOC = {"bandwidth": "16GB/s", "latency": "3ns"}
TOPOLOGIES = {
    "ring": {"kind": "torus", "dims": [6], **NOC},
    "torus": {"kind": "torus", "dims": [4, 4], **NOC},
    "switch": {"kind": "switch", "npus": 6, "router_latency": "2ns", **NOC},
    "fat-tree": {"kind": "fat-tree", "leaves": 2, "npus_per_leaf": 2, "spines": 2, **NOC},
    # 32 GB/s rings and 16 GB/s switches with 32-byte flits: the switch links take 2 cycles per flit.
    "hierarchical": {"kind": "hierarchical", "dims": [
        {"type": "ring", "size": 4, "bandwidth": "32GB/s", "latency": "2ns"},
        {"type": "switch", "size": 2, "bandwidth": "16GB/s", "latency": "5ns"}]},
}


@pytest.mark.parametrize("name", sorted(TOPOLOGIES))
@pytest.mark.parametrize("flits", [1, 5])
def test_zero_load_latency_matches_closed_form(name, flits):
    config = network_config(TOPOLOGIES[name], flit_bytes=16 if name != "hierarchical" else 32, packet_bytes=1024)
    probe = garnet(config)
    pairs = [(0, d) for d in range(1, probe.topology.npus)] + [(probe.topology.npus - 1, 1)]
    for src, dst in pairs:
        net = garnet(config, check_invariants=True)
        arrival_ns = one_message(net, src, dst, flits * net.flit_bytes)
        assert arrival_ns == closed_form_cycles(config, src, dst, flits)  # 1 GHz: cycles are ns
        assert net.packet_stats.packets == 1


def test_closed_form_by_hand_on_a_ring():
    """0 -> 2 on a ring: 2 links of 3 cycles, 3 routers of 1 cycle, 2 NIC cycles, 3 more flits."""
    net = garnet(network_config(TOPOLOGIES["ring"], flit_bytes=16, packet_bytes=1024))
    assert one_message(net, 0, 2, 4 * 16) == 2 * 3 + 3 * 1 + 2 + 3


def test_router_latency_and_switch_latency_add_pipeline_cycles():
    config = network_config(TOPOLOGIES["switch"], flit_bytes=16, packet_bytes=1024, router_latency=4)
    net = garnet(config)
    # NPU router (4) + switch (4 + its 2 ns) + NPU router (4), two 3-cycle links, two NIC cycles.
    assert one_message(net, 0, 3, 16) == 4 + 6 + 4 + 2 * 3 + 2


@pytest.mark.parametrize("name", ["torus-4x4", "torus-2x4x4", "switch-16", "fat-tree-32", "dgx-8x4"])
def test_idle_message_agrees_with_analytical(name):
    """Bundled DL networks: packet = analytical + the closed form's extra cycles (router pipelines, NIC
    links, cpf - 1 per link), within one flit's serialization on the bottleneck link."""
    config = load_network(name)
    topo = config.build_topology()
    src, dst, nbytes = 0, topo.npus - 1, (1 << 20) + 123
    net = GarnetNetwork(topo, config=config)
    packet_ns = one_message(net, src, dst, nbytes)
    analytical_ns = AnalyticalNetwork(topo).message_time(src, dst, nbytes)
    path = topo.route(src, dst)
    cycle_ns = 1 / config.garnet.clock_ghz
    hops = [net.route(src, dst)[0][u][0] for u in path[:-1]]
    link_ns = sum(topo.link(u, v).latency for u, v in zip(path, path[1:]))
    switch_ns = sum(topo.switch_latency.get(n, 0.0) for n in path[1:-1])
    extra_ns = closed_form_cycles(config, src, dst, 1) * cycle_ns - link_ns - switch_ns
    flit_ns = max(out.cpf for out in hops) * cycle_ns
    assert abs(packet_ns - (analytical_ns + extra_ns)) <= flit_ns + 1e-6
    assert abs(packet_ns - analytical_ns) / analytical_ns < 0.02


@pytest.mark.parametrize("name", ["torus-4x4x4", "dgx-8x4", "mesh-8x8-noc"])
@pytest.mark.parametrize("routing", ["dor", "dor-booksim"])
def test_routes_joined_from_legs_equal_routes_built_hop_by_hop(name, routing):
    """Dimension-ordered routes are joined from their per-dimension legs (`Topology.waypoint`): the
    same table, entry for entry and in order, hops, NIC cycles, injection port and dimensions as
    built hop by hop, for every pair and every subset of its tie bits."""
    config = load_network(name, [(["garnet", "routing"], routing)])
    joined = GarnetNetwork(config.build_topology(), config=config)
    by_hop = GarnetNetwork(config.build_topology(), config=config)
    by_hop.routes.join_legs = False
    topo = joined.topology
    legs = 0
    for src in range(topo.npus):
        for dst in range(topo.npus):
            legs += topo.waypoint(src, dst) is not None
            tied = topo.tie_dims(src, dst)
            for ties in {ties & tied for ties in range(tied + 1)}:
                mine, theirs = joined.route(src, dst, ties), by_hop.route(src, dst, ties)
                assert _described(mine) == _described(theirs)
    assert legs > topo.npus  # most pairs' routes were joined


def _described(route: tuple) -> tuple:
    """A route of `GarnetNetwork.route` with its output units named (to compare two networks')."""
    table, hops, nic_cycles, injector, dims = route
    entries = [(node, out.owner.node, out.name, lo, hi) for node, (out, lo, hi) in table.items()]
    return entries, hops, nic_cycles, injector.out.name, dims


def test_multi_packet_message_streams_at_link_bandwidth():
    """With the derived packet size (2 credit round trips: 2 x (3 + 1 + 1 + 3) = 16 flits here: the
    link, the router, the allocation before the credit goes back, the link back) packets follow
    back to back."""
    config = network_config(TOPOLOGIES["torus"], flit_bytes=16)
    net = garnet(config, check_invariants=True)
    assert net.packet_bytes == 16 * 16
    nflits = 200
    arrival = one_message(net, 0, 5, nflits * 16)
    # Back-to-back packets: the whole message is one long zero-load "packet".
    assert arrival == closed_form_cycles(config, 0, 5, nflits)
    assert net.packet_stats.packets == 13


def test_message_to_self_is_delivered_in_zero_time():
    net = garnet(network_config(TOPOLOGIES["ring"]))
    assert one_message(net, 3, 3, 1000) == 0.0
    assert net.flit_hops() == 0


@pytest.mark.parametrize("release", ["tail-credit", "tail-sent"])
def test_conservation_under_heavy_random_traffic(release):
    """Random sizes between random pairs on small buffers: every byte arrives once, credits balance."""
    config = network_config({"kind": "torus", "dims": [4, 4], **NOC}, flit_bytes=16, packet_bytes=48, buffer_flits=2,
                         vcs=2, vc_release=release)
    net = garnet(config, check_invariants=True)
    rng = random.Random(7)
    received, expected = [], [0] * 16
    for i in range(300):
        src, dst = rng.randrange(16), rng.randrange(16)
        nbytes = rng.randrange(1, 400)
        expected[dst] += nbytes
        net.endpoint(src).send(dst, nbytes, i)
        net.endpoint(dst).recv(src, nbytes, i).callbacks.append(lambda _e, i=i: received.append(i))
    net.run()
    net.check_drained()
    assert sorted(received) == list(range(300))
    assert net.bytes_received == expected
    assert net.link_stats()["flits"].sum() == net.flit_hops() > 0


def test_link_stats_columns():
    net = garnet(network_config(TOPOLOGIES["torus"], flit_bytes=16, packet_bytes=64))
    one_message(net, 0, 1, 640)
    frames = net.stats()
    links = frames["links"]
    row = links[(links.src == 0) & (links.dst == 1)].iloc[0]
    assert (row.flits, row.bytes, row.busy_cycles) == (40, 640, 40)
    for column in ("utilization", "mean_buffer_flits", "max_vc_flits", "credit_stall_time_ns"):
        assert column in links
    # each of the 40 flits spends exactly router 1's 1-cycle pipeline in its input buffer
    assert row.mean_buffer_flits * net.clock.now_cycle() == pytest.approx(40)
    nic = frames["nic_links"]
    assert set(nic.kind) == {"nic-npu", "npu-nic"} and nic.flits.sum() == 80
    assert frames["packets"].loc[0, "packets"] == 10
    link_bytes, busy_ns = net.link_counters()
    assert (link_bytes[row.link_id], busy_ns[row.link_id]) == (640, 40.0)  # 40 flits of one 1-ns cycle


def test_same_seed_same_result():
    def run():
        net = garnet(network_config(TOPOLOGIES["torus"], flit_bytes=16, packet_bytes=32, buffer_flits=2))
        rng = random.Random(3)
        times = []
        for i in range(100):
            src, dst = rng.randrange(16), rng.randrange(16)
            net.endpoint(src).send(dst, 100, i)
            net.endpoint(dst).recv(src, 100, i).callbacks.append(lambda _e: times.append(net.env.now))
        net.run()
        return times, net.link_stats()["credit_stall_time_ns"].tolist()

    assert run() == run()


def test_torus_with_one_vc_is_a_config_error():
    with pytest.raises(ConfigError, match="garnet.vcs"):
        garnet(network_config(TOPOLOGIES["torus"], vcs=1))


def test_per_dimension_overrides():
    config = network_config(TOPOLOGIES["hierarchical"], flit_bytes=32, dim={"1": {"buffer_flits": 9, "vcs": 3}})
    net = garnet(config)
    depths = {(o.dst_port.name, len(o.credits), o.depth) for o in net.link_units
              if net.topology.links[o.link_id].dim == 1}
    assert {(vcs, depth) for _, vcs, depth in depths} == {(3, 9)}


@pytest.mark.parametrize("garnet, key", [({"vcz": 2}, "garnet.vcz"), ({"vc_release": "never"}, "garnet.vc_release"),
                                         ({"dim": {"0": {"depth": 3}}}, "garnet.dim"),
                                         ({"router_latency": 0}, "garnet.router_latency"),
                                         ({"link_latency": "0ns"}, "garnet.link_latency")])
def test_bad_config_names_the_key(garnet, key):
    with pytest.raises(ConfigError, match=key):
        network_config(TOPOLOGIES["ring"], **garnet)


def test_astra_sim_garnet_files(astra_sim_inputs):
    samples = astra_sim_inputs / "network/garnet"
    torus = load_network(samples / "sample_torus.txt")
    topo = torus.build_topology()
    assert [d.kind for d in topo.dims] == ["ring", "ring", "ring"] and topo.npus == 8
    assert (torus.garnet.flit_bytes, torus.garnet.vcs, torus.garnet.buffer_flits) == (256, 50, 5000)
    assert topo.dims[0].bandwidth == 32 and topo.dims[1].latency == 200
    a2a = load_network(samples / "sample_a2a.txt")
    assert [d.kind for d in a2a.build_topology().dims] == ["fully-connected", "switch"]
    net = GarnetNetwork(topo, config=torus, check_invariants=True)
    assert one_message(net, 0, 7, 10_000) > 0
    net.check_drained()


def test_astra_sim_garnet_file_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("num-npus: 8\nnum-packagez: 4\n")
    with pytest.raises(ConfigError, match="num-packagez"):
        load_network(bad)


def test_per_vc_occupancy_table_adds_up_to_the_ports():
    """stats()['vcs']: per input port and VC, max and mean occupancy; VCs sum to the port's mean (a
    check of the table's join: both come from the VC counters, which test_link_stats_columns checks)."""
    config = network_config(TOPOLOGIES["torus"], flit_bytes=16, packet_bytes=64, buffer_flits=2)
    net = garnet(config)
    rng = random.Random(5)
    for tag in range(300):
        src, dst = rng.sample(range(net.topology.npus), 2)
        net.endpoint(src).send(dst, 16 * rng.randint(1, 12), tag)
    net.run()
    vcs = net.stats()["vcs"]
    assert list(vcs.columns) == ["router", "port", "link_id", "vc", "max_flits", "mean_flits", "buffer_flits"]
    assert len(vcs) == sum(len(port.vcs) for router in net.routers for port in router.inputs)
    assert (vcs["max_flits"] <= vcs["buffer_flits"]).all() and vcs["max_flits"].max() > 0
    links = net.link_stats()
    per_port = vcs[vcs["link_id"] >= 0].groupby("link_id")["mean_flits"].sum()
    for link_id, mean in per_port.items():
        assert mean == pytest.approx(links.loc[links["link_id"] == link_id, "mean_buffer_flits"].item())


def test_receiver_steps_for_a_tail_announced_while_it_was_due():
    """A packet sent whole announces its tail's arrival at once; a second announcement while the
    receiver is already due for an earlier one must still be processed, at its own cycle (it was
    once dropped, delaying deliveries until some later arrival)."""
    import simpy

    from netsim.garnet.clock import CycleClock
    from netsim.garnet.nic import Receiver
    from netsim.garnet.packet import Message, Packet
    from netsim.garnet.packet_stats import PacketStats

    class Recorder:
        """What a receiver reads of its network, with a packet observer that records arrivals."""

        def __init__(self):
            self.clock = CycleClock(simpy.Environment(), 1.0)
            self.arrived = []
            self.packet_stats = PacketStats()
            self.fast_forward = None
            self.check_invariants = False  # (the packets below were never cut from their messages)

        def packet_observer(self, packet, cycle):
            self.arrived.append((packet.msg.tag, cycle))

    def tail(tag: str) -> Packet:
        """A one-flit packet whose message is tagged `tag`."""
        return Packet(Message(0, 1, ({}, 0, 0, None), tag, 16, 16, 0, 0, None, None), 1, 16, {}, True)

    network = Recorder()
    receiver = Receiver(network)
    receiver.arrive(tail("a"), 5)
    receiver.arrive(tail("b"), 9)
    network.clock.env.run()
    assert network.arrived == [("a", 5), ("b", 9)]


def concurrent_sends_ns(nic_ports: str, destinations) -> float:
    """NPU 0 of the DL-scale 4x4 torus sends 1 MiB to each of `destinations` at once; when the last arrives."""
    net = garnet(load_network("torus-4x4", overrides=[(["garnet", "nic_ports"], nic_ports)]))
    done = []
    for dst in destinations:
        net.endpoint(0).send(dst, 2**20, dst)
        net.endpoint(dst).recv(0, 2**20, dst).callbacks.append(lambda _e: done.append(net.env.now))
    net.run()
    assert len(done) == len(destinations)
    return max(done)


def test_per_link_nic_ports_drive_every_link_at_once():
    """With a NIC port per link, messages to four neighbours take as long as one (the analytical
    model's assumption); with a single port they share one flit per cycle of injection."""
    neighbours = [1, 3, 4, 12]  # +x, -x, +y, -y of NPU 0
    one = concurrent_sends_ns("per-link", neighbours[:1])
    assert concurrent_sends_ns("per-link", neighbours) == one
    assert concurrent_sends_ns("single", neighbours) > 3.5 * (one - 500) + 500  # 4x the serialization


def test_packet_mode_streams_small_packets_under_tail_sent_release():
    """Under tail-sent release a VC freed by a tail may still hold that packet's flits: allocation
    takes a free VC with room for the whole packet, so 5-flit packets stream at one flit per cycle
    in packet fidelity as in flit fidelity."""
    cycles = {}
    for fidelity in ("flit", "packet"):
        config = load_network("torus-4x4", overrides=[(["garnet", "fidelity"], fidelity),
                                                     (["garnet", "packet_bytes"], 4096)])
        net = garnet(config, check_invariants=True)
        one_message(net, 0, 1, 2**20)
        cycles[fidelity] = net.clock.now_cycle()
    flits = 256 * 5  # 256 packets of 4096 bytes, 5 flits of 1000 bytes each
    assert cycles["packet"] == cycles["flit"] < flits + 100


def test_a_whole_size_given_as_a_float_or_numpy_integer_sends_what_an_int_sends():
    """5000.0 and numpy's 5000 send what 5000 sends (in the compiled build too, whose typed code
    takes only Python ints)."""
    import numpy as np

    config = load_network("torus-4x4")
    results = []
    for nbytes in (5000, 5000.0, np.int64(5000)):
        net = GarnetNetwork(config.build_topology(), config=config)
        results.append((one_message(net, 0, 5, nbytes), net.link_stats()["bytes"].sum()))
    assert results[1:] == results[:1] * 2
