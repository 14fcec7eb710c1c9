"""The packet backend's fast-forward per partition (netsim/garnet/shortcuts/partitions.py): how messages are
grouped, skips that end before anything could start a message through their ports (and the conflict
that sends a run back to the whole-network fast-forward should one still do), and the same results
as stepping every cycle on the bundled networks (the mechanism's own exactness tests are
tests/garnet/test_packet_mode.py's test_fast_forward_never_changes_results)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from netsim.errors import PartitionConflict
from netsim.garnet.shortcuts.partitions import _one_period
from netsim.network_config import load_network
from netsim.app.runner import run_collective
from system import load_system
from tests.helpers import garnet, network_config

NOC = {"bandwidth": "16GB/s", "latency": "1ns"}


def noc_torus(fast_forward: str = "partitions"):
    """A 4x4 torus of one-cycle links, 8-flit packets, one NIC port per NPU (all its messages share it)."""
    return network_config({"kind": "torus", "dims": [4, 4], **NOC}, clock_ghz=1.0, flit_bytes=16, vcs=4,
                          nic_ports="single", packet_bytes=128, buffer_flits=8, fidelity="packet",
                          fast_forward=fast_forward)


LONG = 128 * 256  # bytes of a message long enough to be probed (256 packets)


def test_messages_that_share_a_port_share_a_partition_until_one_leaves():
    """0->1 and 2->1 share NPU 1's ejection port, 5->6 shares nothing with them: two partitions; when
    2->1 is delivered, 0->1 is regrouped on its own at its next probe."""
    net = garnet(noc_torus())
    ff = net.fast_forward
    delivered = []
    for src, dst, nbytes in ((0, 1, LONG), (2, 1, 128 * 40), (5, 6, LONG)):
        net.endpoint(src).send(dst, nbytes, "m")
        net.endpoint(dst).recv(src, nbytes, "m").callbacks.append(lambda _e, s=src: delivered.append(s))
    net.run(until=20.5)  # every message has cut its first packets
    groups = {id(partition): partition for partition in ff.of_message.values()}
    assert sorted(sorted((m.src, m.dst) for m in p.messages) for p in groups.values()) == [[(0, 1), (2, 1)], [(5, 6)]]
    shared = ff.of_message[next(m for m in ff.of_message if m.src == 0)]
    assert net.receivers and any(r in shared.receivers for r in net.receivers)
    while 2 not in delivered:
        net.run(until=net.env.now + 10)
    net.run(until=net.env.now + 50)  # (0->1's next cut has its partition probed, which regroups it)
    assert 0 not in delivered
    alone = ff.of_message[next(m for m in ff.of_message if m.src == 0)]
    assert [(m.src, m.dst) for m in alone.messages] == [(0, 1)]
    net.run()
    net.check_drained()
    assert sorted(delivered) == [0, 2, 5] and ff.skips > 0 and not ff.of_message


def late_sends(mode: str, trigger: str, jump: int = 0):
    """0->1, long (2,048 flits), then a message 2->1 through NPU 1's ejection port, sent 1,500 cycles
    later (`trigger` "timer") or when a 100-packet message 5->6 arrives ("delivery"), when 0->1's
    partition is moved `jump` cycles further ahead; the network and the cycles the messages arrived in."""
    net = garnet(noc_torus(mode))
    arrived, received = {}, {}
    for src, dst, nbytes in ((0, 1, LONG), (2, 1, 128), (5, 6, 128 * 100)):
        received[src] = net.endpoint(dst).recv(src, nbytes, "m")
        received[src].callbacks.append(lambda _e, s=src: arrived.__setitem__(s, net.clock.now_cycle()))

    def late(_event=None):
        if jump:
            for partition in set(net.fast_forward.of_message.values()):
                partition.ahead_until += jump
        net.endpoint(2).send(1, 128, "m")

    def sends():
        net.endpoint(0).send(1, LONG, "m")
        if trigger == "timer":
            yield net.env.timeout(1500)
            late()
        else:
            yield net.env.timeout(200)
            net.endpoint(5).send(6, 128 * 100, "m")
            received[5].callbacks.append(late)

    net.env.process(sends())
    return net, arrived


@pytest.mark.parametrize("trigger", ["timer", "delivery"])
def test_a_skip_ends_before_anything_could_start_a_message_through_its_ports(trigger):
    """A skip stops before the next simpy event and before any other message could be delivered (either
    may start a message): a message that starts through the ports of a partition that skipped finds
    them at the clock's cycle, and every message arrives when it does with fast-forward off."""
    results = {}
    for mode in ("partitions", "off"):
        net, arrived = late_sends(mode, trigger)
        net.run()
        net.check_drained()
        results[mode] = arrived
        if mode == "partitions":
            assert net.fast_forward.skips > 0
    assert results["partitions"] == results["off"] and 2 in results["off"]


def test_a_message_through_ports_ahead_of_the_clock_is_a_partition_conflict():
    """Should ports still be ahead of the clock when a message starts through them (as if a skip had
    gone too far), that is not simulated on: it raises PartitionConflict (the runner then simulates the
    run again with the whole-network fast-forward)."""
    net, _arrived = late_sends("partitions", "timer", jump=10_000)
    with pytest.raises(PartitionConflict, match=r"message 2->1 started in cycle \d+ through a port whose "
                                                r"partition was fast-forwarded to cycle \d+"):
        net.run()


@pytest.mark.parametrize("network, kind, size, skips", [
    ("torus-4x4", "all-reduce", 64 << 20, True), ("torus-2x4x4", "all-reduce", 64 << 20, True),
    ("ring-16", "all-reduce", 256 << 20, True), ("dgx-8x4", "all-reduce", 256 << 20, True),
    ("switch-16", "all-gather", 64 << 20, True), ("torus-4x4", "all-to-all", 64 << 20, True),
    ("torus-8x8-noc", "all-reduce", 256 << 10, True),
    ("fat-tree-32", "all-reduce", 64 << 20, False)])  # (3-packet messages: too short to probe)
def test_fast_forward_per_partition_gives_the_results_of_stepping_every_cycle(network, kind, size, skips):
    """A collective on a bundled network, packet fidelity, through the runner (symmetric collectives,
    reports): every table and time as with fast-forward off but the component steps (`events`), and
    skipping cycles of the partitions it found where messages are long (a tenth at least: skips end
    before other messages' deliveries, which on torus-2x4x4 leaves 17% of them to skip)."""
    results, figures = [], []
    for mode in ("partitions", "off"):
        config = load_network(network, [(["garnet", "fidelity"], "packet"), (["garnet", "fast_forward"], mode)],
                              backend="garnet")
        result = run_collective(config, load_system("default"), kind, size)
        tables = {name: frame.drop(columns="events", errors="ignore").to_csv() for name, frame in result.tables.items()
                  if name != "link_timeseries"}  # (sampled while a partition is ahead: its links' counters lead)
        results.append((result.summary["collective_time_ns"], tables, result.summary["warnings"]))
        figures.append(result.summary["fast_forward"])
    assert results[0] == results[1]
    assert figures[1]["mode"] == "off" and figures[0]["mode"] == "partitions"
    if skips:
        assert figures[0]["skips"] > 0 and figures[0]["partitions"] > 0 and figures[0]["skipped_share"] > 0.1
    else:
        assert figures[0]["skips"] == 0


def test_a_repeat_found_a_multiple_of_the_known_period_back_skips_by_that_period():
    """A partition's seed state repeats every `period` cycles: a match found 3 periods back (probes
    spared while no skip fitted) gives one period's growth and the arrivals of its last period; a span
    that is no multiple of it, or growth that does not divide, is kept as found."""
    message = SimpleNamespace(created=100)
    arrivals = [(latency, SimpleNamespace(msg=message)) for latency in (10, 40, 50, 70, 80, 110)]  # arrived 110..210
    period, deltas, last = _one_period(30, 90, [-3 * 128, 6, 0], arrivals, 210)
    assert (period, deltas) == (30, [-128, 2, 0])
    assert [latency for latency, _packet in last] == [110]  # arrived in cycles 181..210 (80: in 180, the period before)
    assert _one_period(30, 100, [-3 * 128, 6, 0], arrivals, 210) == (100, [-3 * 128, 6, 0], arrivals)
    assert _one_period(30, 90, [-3 * 128, 5, 0], arrivals, 210) == (90, [-3 * 128, 5, 0], arrivals)
