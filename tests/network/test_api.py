"""NetworkAPI: MPI-like matching of send and recv on (src, dst, tag)."""

import numpy as np
import pytest

from netsim.network_config import load_network
from tests.helpers import analytical, garnet


def test_recv_posted_first_fires_on_arrival():
    net = analytical("ring-8")
    a, b = net.endpoint(0), net.endpoint(1)
    got = b.recv(0, 1000, tag=7)
    a.send(1, 1000, tag=7)
    net.run()
    assert got.processed
    assert net.env.now == pytest.approx(500 + 1000 / 50)


def test_message_arriving_before_recv_waits_unexpected():
    net = analytical("ring-8")
    a, b = net.endpoint(0), net.endpoint(1)
    a.send(1, 1000, tag=1)
    fired = {}

    def late_receiver():
        yield net.env.timeout(10_000)
        yield b.recv(0, 1000, tag=1)
        fired["at"] = net.env.now

    net.env.process(late_receiver())
    net.run()
    assert fired["at"] == 10_000  # max(arrival = 520, post = 10000)


def test_tags_and_sources_keep_messages_apart_and_in_order():
    net = analytical("switch-16")
    order = []
    dst = net.endpoint(5)

    def receiver():
        for src, tag in [(2, "b"), (1, "a"), (1, "a")]:
            yield dst.recv(src, 100, tag)
            order.append((src, tag))

    net.env.process(receiver())
    net.endpoint(1).send(5, 100, "a")
    net.endpoint(1).send(5, 100, "a")
    net.endpoint(2).send(5, 100, "b")
    net.run()
    assert order == [(2, "b"), (1, "a"), (1, "a")]
    assert net.waiting() == []
    assert net.bytes_sent[1] == 200 and net.bytes_received[5] == 300


def test_size_mismatch_is_an_error():
    net = analytical("ring-8")
    net.endpoint(1).recv(0, 10, tag=0)
    net.endpoint(0).send(1, 20, tag=0)
    with pytest.raises(ValueError, match="has 20 B, recv expected 10 B"):
        net.run()


@pytest.mark.parametrize("backend", ["analytical", "garnet"])
def test_sizes_are_whole_bytes(backend):
    """A whole size given as a float or numpy integer is sent as that many bytes; a fractional one
    is refused at the send (the packet backend could not cut it into flits)."""
    net = analytical("ring-8") if backend == "analytical" else garnet(load_network("ring-8", backend="garnet"))
    got = [net.endpoint(1).recv(0, 1000, tag=t) for t in range(2)]
    net.endpoint(0).send(1, 1000.0, tag=0)
    net.endpoint(0).send(1, np.int64(1000), tag=1)
    net.run()
    assert all(event.processed for event in got) and net.bytes_received[1] == 2000
    for size in (1000.5, float("inf"), float("nan")):
        with pytest.raises(ValueError, match=rf"send of {size} bytes to NPU 1; messages carry whole bytes"):
            net.endpoint(0).send(1, size, tag=2)


def test_unmatched_recv_is_reported():
    net = analytical("ring-8")
    net.endpoint(3).recv(2, 64, tag="x")
    net.run()
    assert net.waiting() == ["NPU 3 waits for 64 B from NPU 2 (tag x)"]


def test_schedule_calls_back_after_delay():
    net = analytical("ring-8")
    seen = []
    net.endpoint(0).schedule(42.0, lambda: seen.append(net.endpoint(0).now()))
    net.run()
    assert seen == [42.0]


@pytest.mark.parametrize("backend", ["analytical", "garnet"])
def test_post_delivers_as_send_does_without_a_hand_off_event(backend):
    """`post` is `send` for a sender that never waits for the hand-off: the same arrivals, no event
    returned, and on the packet backend one simpy event per message fewer (the NIC does not tell)."""
    messages = [(0, 1, 5000), (0, 1, 700), (3, 7, 9000), (5, 5, 64)]

    def arrivals(method: str) -> tuple[list, int, list]:
        net = analytical("ring-8") if backend == "analytical" else garnet(load_network("ring-8", backend="garnet"))
        got = []
        for tag, (src, dst, nbytes) in enumerate(messages):
            net.endpoint(dst).recv(src, nbytes, tag).callbacks.append(lambda _e, tag=tag: got.append((tag, net.env.now)))
        returned = [getattr(net.endpoint(src), method)(dst, nbytes, tag) for tag, (src, dst, nbytes) in enumerate(messages)]
        net.run()
        return got, net.events, returned

    sent, sent_events, handed_off = arrivals("send")
    posted, posted_events, returned = arrivals("post")
    assert posted == sent and len(posted) == 4
    assert returned == [None] * 4 and all(event.processed for event in handed_off)
    if backend == "garnet":  # (and fewer of the clock's own: the NIC does not step at a tail to tell)
        assert posted_events <= sent_events - 4
