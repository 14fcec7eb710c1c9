"""Deadlock detection, and congestion against the analytical backend."""

from __future__ import annotations

import pytest

from netsim.analytical import AnalyticalNetwork
from netsim.errors import DeadlockError
from netsim.garnet.network import GarnetNetwork
from netsim.network_config import load_network
from netsim.app.traffic import SynthRun, run_synth
from tests.helpers import network_config


def ring_noc(**garnet):
    topology = {"kind": "torus", "dims": [8, 8], "bandwidth": "16GB/s", "latency": "1ns"}
    return network_config(topology, **{"flit_bytes": 16, "buffer_flits": 2, "deadlock_cycles": 20000, **garnet})


def test_one_vc_without_dateline_deadlocks_under_tornado_and_is_reported():
    with pytest.raises(DeadlockError) as caught:
        run_synth(ring_noc(vcs=1, deadlock_cycles=300), "tornado", 0.6, 4, 3000, seed=1, network_options={"dateline": False})
    message = str(caught.value)
    assert "waiting cycle" in message and "router" in message and "VC 0" in message
    steps = message.split("waiting cycle: ")[1].split(" -> ")
    assert steps[0] == steps[-1]  # names a closed cycle of VCs
    assert len(message.splitlines()) == 1


def test_dateline_with_two_vcs_survives_the_same_traffic():
    """With a detector that fires after 1000 cycles without a move (well within the run; it does
    fire for the same 2 VCs without the dateline), the dateline keeps packets moving."""
    with pytest.raises(DeadlockError):
        run_synth(ring_noc(vcs=2, deadlock_cycles=1000), "tornado", 0.6, 4, 3000, seed=1,
                  network_options={"dateline": False})
    result = run_synth(ring_noc(vcs=2, deadlock_cycles=1000), "tornado", 0.6, 4, 3000, seed=1)
    assert result["packets"] > 0


def test_a_router_starved_by_congestion_is_warned_about_and_the_run_goes_on():
    """Under hotspot overload, with a detector far more eager than the default, routers wait longer
    than deadlock_cycles for room downstream while the others keep moving: that is starvation, not
    a deadlock. The run goes on, and a one-line warning per router names it and its waiting VCs."""
    config = ring_noc(vcs=4, buffer_flits=4, router_latency=4, packet_bytes=64, nic_ports="single",
                      deadlock_cycles=300)
    run = SynthRun(config, "hotspot", 1.0, 4, 3000, 1, None)
    result = run.execute()
    assert result["packets"] > 0
    warnings = run.network.warnings
    assert warnings
    starved = set()
    for warning in warnings:
        assert warning.startswith("starvation at cycle") and "while the rest of the network kept moving" in warning
        router = warning.split(": router ")[1].split(" ")[0]
        waiting = warning.split("waiting: ")[1].split("; ")
        if waiting[-1].startswith("... ("):  # a long list is cut short with its length
            assert int(waiting.pop().split("(")[1].split(" ")[0]) > len(waiting)
        assert waiting and all(name.startswith(f"router {router} in-port") for name in waiting)
        assert len(warning.splitlines()) == 1 and router not in starved  # once per router
        starved.add(router)


def test_all_to_all_takes_longer_on_the_packet_backend():
    """Every NPU of a 4x4 torus sends 64 KiB to every other: links and NICs are shared."""
    config = load_network("torus-4x4")
    topo = config.build_topology()
    finish = {}
    for backend in (AnalyticalNetwork(topo), GarnetNetwork(topo, config=config, check_invariants=True)):
        done = []
        for src in range(topo.npus):
            for dst in range(topo.npus):
                if src != dst:
                    backend.endpoint(src).send(dst, 65536, "a2a")
                    backend.endpoint(dst).recv(src, 65536, "a2a").callbacks.append(
                        lambda _e, net=backend: done.append(net.env.now))
        backend.run()
        assert len(done) == topo.npus * (topo.npus - 1)
        finish[backend.backend_name] = max(done)
    assert finish["garnet"] > 1.2 * finish["analytical"]
