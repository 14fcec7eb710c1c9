"""Backends by name: the config's `backend` key picks one; nothing else tests for a backend's name.

Each backend registers its Network class and its plan (`netsim.network_plan.BackendPlan`: the
settings it shows, the state it will hold, its summary entries); both are imported on first use,
so an analytical run never loads the packet backend."""

from __future__ import annotations

from importlib import import_module

import simpy

from netsim.api import Network
from netsim.errors import ConfigError
from netsim.topology import Topology

# name -> ("module:Network class", "module:BackendPlan class")
BACKENDS = {
    "analytical": ("netsim.analytical:AnalyticalNetwork", "netsim.network_plan:BackendPlan"),
    "congestion-aware": ("netsim.congestion_aware:CongestionAwareNetwork", "netsim.network_plan:BackendPlan"),
    "garnet": ("netsim.garnet.network:GarnetNetwork", "netsim.garnet.plan:PacketPlan"),
}


def _registered(backend: str, which: int):
    """The class registered for `backend` (0: its Network, 1: its plan), imported now."""
    target = BACKENDS.get(backend)
    if target is None:
        raise ConfigError(f"unknown backend '{backend}' (expected one of {', '.join(BACKENDS)})")
    module_name, class_name = target[which].split(":")
    try:
        module = import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(module_name.rsplit(".", 1)[0]):
            raise ConfigError(f"backend '{backend}' is not built yet") from None
        raise
    return getattr(module, class_name)


def backend_class(backend: str) -> type[Network]:
    """The Network subclass registered as `backend` (imported now)."""
    return _registered(backend, 0)


def plan_class(backend: str) -> type:
    """The BackendPlan subclass registered for `backend` (imported now)."""
    return _registered(backend, 1)


def create_network(backend: str, topology: Topology, config=None, env: simpy.Environment | None = None,
                   **options) -> Network:
    """Build the named backend on `topology`; `config` is the NetworkConfig (backends read their table)."""
    return backend_class(backend)(topology, env=env, config=config, **options)


def congestion_aware_backends() -> list[str]:
    """The registered backends whose links carry one message at a time (`Network.models_congestion`)."""
    return [name for name in BACKENDS if backend_class(name).models_congestion]
