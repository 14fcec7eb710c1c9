"""Helpers for the tests: build networks and systems from bundled configs with overrides."""

from __future__ import annotations

from pathlib import Path

from netsim.analytical import AnalyticalNetwork
from netsim.garnet.network import GarnetNetwork
from netsim.network_config import load_network
from system import build_systems, load_system

SHARED = Path(__file__).resolve().parents[2] / "shared" / "astra-sim-inputs"


def analytical(network: str, **topology_overrides) -> AnalyticalNetwork:
    overrides = [(["topology", key], value) for key, value in topology_overrides.items()]
    return AnalyticalNetwork(load_network(network, overrides).build_topology())


def systems_for(network, **system_overrides):
    overrides = [([key.replace("_", "-")], value) for key, value in system_overrides.items()]
    return build_systems(network, load_system("default", overrides))


def garnet(config, **options) -> GarnetNetwork:
    """The packet backend of a network config (options: GarnetNetwork's test switches)."""
    return GarnetNetwork(config.build_topology(), config=config, **options)


def one_message(net, src: int, dst: int, nbytes: int) -> float:
    """Send one message on an idle network; the ns at which its recv fires."""
    arrived = []
    net.endpoint(src).send(dst, nbytes, "m")
    net.endpoint(dst).recv(src, nbytes, "m").callbacks.append(lambda _e: arrived.append(net.env.now))
    net.run()
    assert len(arrived) == 1
    return arrived[0]
