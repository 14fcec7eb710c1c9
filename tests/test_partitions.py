"""The packet backend's fast-forward per partition (netsim/garnet/partitions.py): how messages are
grouped, the conflict that sends a run back to the whole-network fast-forward, and the same results
as stepping every cycle on the bundled networks (the mechanism's own exactness tests are
tests/test_packet_mode.py's test_fast_forward_never_changes_results)."""

from __future__ import annotations

import pytest

from netsim.errors import PartitionConflict
from netsim.network_config import load_network
from netsim.runner import run_collective
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


def test_a_message_started_through_ports_moved_ahead_is_a_partition_conflict():
    """Once 0->1's partition has skipped ahead of the clock, a message 2->1 (NPU 1's ejection port) that
    starts before the clock gets there raises PartitionConflict; the whole-network fast-forward runs the
    same sends to the end."""
    for mode in ("partitions", "network"):
        net = garnet(noc_torus(mode))
        net.endpoint(0).send(1, LONG, "long")
        net.endpoint(1).recv(0, LONG, "long")

        def after_a_skip():
            while not net.fast_forward.skips and net.env.now < 5000:
                yield net.env.timeout(10)
            net.endpoint(2).send(1, 128, "late")
            net.endpoint(1).recv(2, 128, "late")

        net.env.process(after_a_skip())
        if mode == "partitions":
            with pytest.raises(PartitionConflict, match=r"message 2->1 started in cycle \d+ through a port whose "
                                                        r"partition was fast-forwarded to cycle \d+"):
                net.run()
        else:
            net.run()
            net.check_drained()


@pytest.mark.parametrize("network, kind, size, skips", [
    ("torus-4x4", "all-reduce", 64 << 20, True), ("torus-2x4x4", "all-reduce", 64 << 20, True),
    ("ring-16", "all-reduce", 256 << 20, True), ("dgx-8x4", "all-reduce", 256 << 20, True),
    ("switch-16", "all-gather", 64 << 20, True), ("torus-4x4", "all-to-all", 64 << 20, True),
    ("torus-8x8-noc", "all-reduce", 256 << 10, True),
    ("fat-tree-32", "all-reduce", 64 << 20, False)])  # (3-packet messages: too short to probe)
def test_fast_forward_per_partition_gives_the_results_of_stepping_every_cycle(network, kind, size, skips):
    """A collective on a bundled network, packet fidelity, through the runner (symmetric collectives,
    reports): every table and time as with fast-forward off but the component steps (`events`), and
    skipping most of the cycles of the partitions it found where messages are long."""
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
        assert figures[0]["skips"] > 0 and figures[0]["partitions"] > 0 and figures[0]["skipped_share"] > 0.4
    else:
        assert figures[0]["skips"] == 0
