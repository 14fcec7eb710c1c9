"""Oracles for the packet backend's event-driven clock: results must not depend on the order in
which components are stepped within a cycle, nor on extra steps of a component that has nothing
to do (a component re-derives what it waits for on every step). Both once failed under tail-sent
release: a VC's turn order depended on whether its upstream stepped first, a waiting head was
woken a few cycles late, and an idle NIC's no-op step delayed its next message by a cycle."""

from __future__ import annotations

import random

import pytest

from netsim.garnet import core
from netsim.garnet.clock import CycleClock
from netsim.network_config import load_network
from netsim.app.traffic import SynthRun
from tests.helpers import garnet, network_config


def reversed_wake(self, component, cycle):
    """CycleClock.wake, but a bucket steps its components in reverse wake-up order (the bucket
    being stepped still appends, so a component woken for this very cycle runs in it)."""
    bucket = self.bucket(cycle)
    size = len(bucket) if bucket is not None else 0
    ORIGINAL_WAKE(self, component, cycle)
    if bucket is not None and len(bucket) > size and cycle != self.cycle:
        bucket.insert(0, bucket.pop())


ORIGINAL_WAKE = CycleClock.wake


def random_messages(config, seed: int = 0, messages: int = 60) -> list[tuple[int, float]]:
    """Random point-to-point messages through the NetworkAPI; (message, delivery ns), by message."""
    net = garnet(config, check_invariants=True)
    rng = random.Random(seed)
    n = net.topology.npus
    done = []

    def message(i: int):
        src = rng.randrange(n)
        dst = rng.randrange(n - 1)
        dst += dst >= src
        size = rng.choice([4000, 20000, 100000])
        yield net.env.timeout(rng.randrange(200))
        net.endpoint(src).send(dst, size, i)
        yield net.endpoint(dst).recv(src, size, i)
        done.append((i, net.env.now))

    for i in range(messages):
        net.env.process(message(i))
    net.run()
    net.check_drained()
    return sorted(done)


@pytest.mark.parametrize("name, garnet", [
    ("dgx-8x4", {}),  # tail-sent release, per-link NIC ports
    ("dgx-8x4", {"fidelity": "packet"}),
    ("switch-16", {"buffer_flits": 2}),
    ("torus-4x4", {"vc_release": "tail-credit"}),
])
@pytest.mark.skipif(core.build == "compiled",
                    reason="compiled callers of CycleClock.wake do not see a patched method (the pure run checks this)")
def test_step_order_within_a_cycle_does_not_change_results(monkeypatch, name, garnet):
    config = load_network(name, overrides=[(["garnet", key], value) for key, value in garnet.items()])
    in_order = random_messages(config)
    monkeypatch.setattr(CycleClock, "wake", reversed_wake)
    assert random_messages(config) == in_order


def step_everyone_every_cycle(net, until=lambda: False) -> None:
    """Have every router and NIC port of `net` stepped in every cycle from now on (until `until()`
    holds), beside the steps the clock gives them."""
    components = [*net.routers, *net.injectors, *net.receivers]
    after_cycle = net.clock.after_cycle

    def wake_everyone(cycle: int) -> None:
        if not until():
            for component in components:
                net.clock.wake(component, cycle + 1)
            net.clock.hook_at = 0  # called after every cycle
        after_cycle(cycle)

    net.clock.after_cycle = wake_everyone
    net.clock.hook_at = 0


def synth_arrivals(config, poll: bool) -> tuple[list, dict]:
    """Every packet's (src, dst, created, injected, arrived) and the summary of a synthetic run;
    with `poll`, every router and NIC port is also stepped every cycle while traffic is about."""
    run = SynthRun(config, "uniform", 0.5, 2, 600, 4, None, {"check_invariants": True})
    net = run.network
    arrivals = []
    observe = run.window.observe
    net.packet_observer = lambda p, c: (arrivals.append((p.msg.src, p.msg.dst, p.msg.created, p.injected, c)),
                                        observe(p, c))
    if poll:
        step_everyone_every_cycle(net)
    summary = run.execute()
    for key in ("wall_time_s", "events"):
        summary.pop(key)
    return sorted(arrivals), summary


@pytest.mark.parametrize("fidelity", ["flit", "packet"])
@pytest.mark.parametrize("vc_release", ["tail-credit", "tail-sent"])
def test_extra_steps_of_idle_components_do_not_change_results(fidelity, vc_release):
    topology = {"kind": "torus", "dims": [4], "bandwidth": "16GB/s", "latency": "1ns"}
    config = network_config(topology, clock_ghz=1.0, flit_bytes=16, vcs=2, buffer_flits=3, packet_bytes=32,
                            fidelity=fidelity, vc_release=vc_release)
    assert synth_arrivals(config, poll=True) == synth_arrivals(config, poll=False)


def test_turn_order_ranks_are_distinct_when_ports_have_different_vc_counts():
    """Ties in turn order are broken by VC rank, so ranks must be distinct within a router even
    when a `[garnet.dim.N] vcs` override gives its ports different VC counts."""
    config = load_network("dgx-8x4", overrides=[(["garnet", "dim"], {"1": {"vcs": 2}})])
    net = garnet(config)
    for router in net.routers:
        ranks = [vc.rank for port in router.inputs for vc in port.vcs]
        assert len({len(port.vcs) for port in router.inputs}) > 1 or router.node >= net.topology.npus
        assert len(set(ranks)) == len(ranks)


def shifted_flows_ns(poll: bool) -> float:
    """Every NPU of the bundled ring-8 (packet fidelity) sends 1 MiB to the NPU two on: each link
    carries a through and an ejecting flow, packets of both queue in one VC."""
    config = load_network("ring-8", overrides=[(["garnet", "fidelity"], "packet")])
    net = garnet(config, check_invariants=True, fast_forward=False)
    received = []
    for src in range(8):
        dst = (src + 2) % 8
        net.endpoint(src).send(dst, 2**20, "shift")
        received.append(net.endpoint(dst).recv(src, 2**20, "shift"))
    if poll:
        step_everyone_every_cycle(net, until=lambda: all(event.triggered for event in received))
    net.run()
    net.check_drained()
    return net.env.now


def test_packets_leave_a_vc_in_order_whatever_extra_steps_are_taken():
    """Packet fidelity once let a VC's next packet leave between the flits of the packet ahead of it
    (they shared the crossbar input's slots as packets of different VCs do): credits came back out
    of order, and a router stepped at a lucky cycle counted credits that were not back yet (here
    70,560 ns polled against 78,860 ns). The invariants now check the order."""
    assert shifted_flows_ns(poll=True) == shifted_flows_ns(poll=False)
