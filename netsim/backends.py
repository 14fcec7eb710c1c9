"""Backends by name: the config's `backend` key picks one; nothing else tests for a backend's name."""

from __future__ import annotations

from importlib import import_module

import simpy

from netsim.api import Network
from netsim.errors import ConfigError
from netsim.topology import Topology

# name -> "module:class"; imported on first use so an analytical run never loads the packet backend.
BACKENDS = {
    "analytical": "netsim.analytical:AnalyticalNetwork",
    "congestion-aware": "netsim.congestion_aware:CongestionAwareNetwork",
    "garnet": "netsim.garnet.network:GarnetNetwork",
}
# name -> "module:function" counting the backend's own state before it is built, as netsim.budget's
# Budget fields (topology, its config table, the largest message's bytes); the others hold little
# beyond the topology, which the per-NPU estimate covers.
STATE_ESTIMATES = {"garnet": "netsim.budget:packet_backend_state"}


def state_estimate(backend: str):
    """The function counting `backend`'s own state before it is built (STATE_ESTIMATES), or None."""
    if backend not in STATE_ESTIMATES:
        return None
    module_name, name = STATE_ESTIMATES[backend].split(":")
    return getattr(import_module(module_name), name)


def backend_class(backend: str) -> type[Network]:
    """The Network subclass registered as `backend` (imported now)."""
    target = BACKENDS.get(backend)
    if target is None:
        raise ConfigError(f"unknown backend '{backend}' (expected one of {', '.join(BACKENDS)})")
    module_name, class_name = target.split(":")
    try:
        module = import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(module_name.rsplit(".", 1)[0]):
            raise ConfigError(f"backend '{backend}' is not built yet") from None
        raise
    return getattr(module, class_name)


def create_network(backend: str, topology: Topology, config=None, env: simpy.Environment | None = None,
                   **options) -> Network:
    """Build the named backend on `topology`; `config` is the NetworkConfig (backends read their table)."""
    return backend_class(backend)(topology, env=env, config=config, **options)


def congestion_aware_backends() -> list[str]:
    """The registered backends whose links carry one message at a time (`Network.models_congestion`)."""
    return [name for name in BACKENDS if backend_class(name).models_congestion]
