"""The congestion-aware analytical backend: links as FIFOs, messages stored and forwarded whole."""

import pytest

from netsim.congestion_aware import CongestionAwareNetwork
from netsim.network_config import load_network
from netsim.app.runner import run_collective, run_training
from system import load_system
from tests.helpers import analytical, one_message
from workload import load_workload


def aware(network: str, **topology_overrides) -> CongestionAwareNetwork:
    return CongestionAwareNetwork(analytical(network, **topology_overrides).topology)


def test_one_message_pays_every_link_of_its_route():
    """Store and forward: a switch is two links, a ring route two hops of latency and serialization each."""
    nbytes = 2**20
    switch = aware("switch-16")
    hop = switch.topology.links[0].latency + nbytes / switch.topology.links[0].bandwidth
    assert one_message(switch, 0, 5, nbytes) == pytest.approx(2 * hop)
    ring = aware("ring-8")
    link = ring.topology.link(0, 1)
    assert one_message(ring, 0, 2, nbytes) == pytest.approx(2 * (link.latency + nbytes / link.bandwidth))


def test_messages_sharing_a_link_queue_behind_each_other():
    """Two messages into one NPU through its switch: the second waits for the first on the switch's
    link to that NPU, so it arrives one serialization later."""
    net, nbytes = aware("switch-16"), 2**20
    ser = nbytes / net.topology.links[0].bandwidth
    arrivals = []
    for src in (1, 2):
        net.endpoint(src).send(0, nbytes, src)
        net.endpoint(0).recv(src, nbytes, src).callbacks.append(lambda _e: arrivals.append(net.env.now))
    net.run()
    assert arrivals[1] - arrivals[0] == pytest.approx(ser)


def test_without_contention_it_agrees_with_the_congestion_unaware_backend():
    """A ring all-reduce on a ring sends every message one hop on its own link."""
    times = []
    for backend in ("analytical", "congestion-aware"):
        network = load_network("ring-8", backend=backend)
        times.append(run_collective(network, load_system("default"), "all-reduce", 2**20).summary["collective_time_ns"])
    assert times[0] == pytest.approx(times[1])


@pytest.mark.parametrize("network, kind, algorithm", [("torus-4x4", "all-to-all", "direct"),
                                                      ("ring-16", "all-reduce", "direct"),
                                                      ("fat-tree-32", "all-to-all", "direct"),
                                                      ("dgx-8x4", "all-to-all", "direct")])
def test_link_utilization_never_exceeds_one(network, kind, algorithm):
    """Contended collectives (the congestion-unaware model would put several messages on a link at
    once) on multi-dimensional and multi-level networks: every link's busy time fits in the run."""
    cfg = load_network(network, backend="congestion-aware")
    system = load_system("default", [([f"{kind}-implementation"], algorithm)])
    result = run_collective(cfg, system, kind, 4 * 2**20)
    links = result.tables["links"]
    assert links["utilization"].max() <= 1 + 1e-9
    assert links["utilization"].max() > 0.5  # the test is of a loaded network
    series = result.tables["link_timeseries"]
    assert (series["busy_time_ns"] <= series["time_ns"] + 1e-6).all()
    unaware = run_collective(load_network(network), system, kind, 4 * 2**20)
    assert unaware.tables["links"]["utilization"].max() > 1  # where contention would have been free
    assert result.summary["collective_time_ns"] > unaware.summary["collective_time_ns"]


def test_mid_run_counters_count_only_what_was_sent():
    """Sampled while three messages queue on one link, its busy time is the part already sent: all
    the time so far, not the three serializations already scheduled."""
    net, nbytes = aware("ring-8"), 2**20
    link = net.topology.link(0, 1)
    for tag in range(3):
        net.endpoint(0).send(1, nbytes, tag)
    net.run(until=1.5 * nbytes / link.bandwidth)  # stops at the first arrival, mid-way through the second
    sent, busy = net.link_counters()
    assert 0 < net.env.now < 2 * nbytes / link.bandwidth
    assert busy[link.id] == pytest.approx(net.env.now)
    assert sent[link.id] == 3 * nbytes


def test_it_runs_the_workload_layer():
    network = load_network("torus-2x4x4", backend="congestion-aware")
    summary = run_training(network, load_system("default"), load_workload("Resnet50_DataParallel")).summary
    unaware = run_training(load_network("torus-2x4x4"), load_system("default"),
                           load_workload("Resnet50_DataParallel")).summary
    assert summary["backend"] == "congestion-aware"
    assert summary["compute_time_ns"] == unaware["compute_time_ns"]
    assert summary["end_to_end_time_ns"] >= unaware["end_to_end_time_ns"]

