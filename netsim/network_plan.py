"""A network's plan: its config, its topology (built once it fits in memory) and its backend's own
plan, made once before anything is simulated and handed to whatever builds or describes the run.

A backend's plan (`BackendPlan`, registered beside the backend in netsim.backends) holds what the
backend derives from the config and topology (the packet backend's Params), the settings it shows
(`settings`, `settings_line`), the state it will hold (`state`, netsim.budget's fields) and its
entries in a run's summary (`summary`), so nothing above the network layer asks which backend runs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from netsim.backends import create_network, plan_class
from netsim.budget import Budget

if TYPE_CHECKING:
    import simpy

    from netsim.api import Network
    from netsim.network_config import NetworkConfig
    from netsim.topology import Topology


class BackendPlan:
    """What a backend derives before it is built: nothing beyond the topology, for the analytical ones."""

    label = "backend"  # how a table names the backend's settings ("packet backend: flit_bytes")
    settings_key = "backend_settings"  # the summary's key of `settings()`

    def __init__(self, config: NetworkConfig, topology: Topology):
        self.config = config
        self.topology = topology

    def settings(self) -> dict:
        """The settings in force that a reader should see (summary.json's `packet_settings`, `netsim topo`)."""
        return {}

    def settings_line(self) -> str:
        """`settings` in one line for a live view's header ('' when there are none)."""
        return ""

    def state(self, largest_message: int) -> dict:
        """What the backend will hold beyond the per-NPU estimate, as Budget fields (ports, vcs, ...)."""
        return {}

    def network_options(self) -> dict:
        """Keyword arguments for the backend's Network: what this plan derived, so it is not derived again."""
        return {}

    def summary(self, network: Network) -> dict:
        """The backend's own entries in a run's summary.json."""
        return {}


@dataclass(frozen=True)
class NetworkPlan:
    """A network config with its topology and its backend's plan (see the module docstring)."""

    config: NetworkConfig
    topology: Topology
    backend: BackendPlan

    def check(self, what: str, chunks_per_npu: int = 0, largest_message: int = 0) -> None:
        """ConfigError unless the NPUs' state (`chunks_per_npu` each) and the backend's own (the packets
        of a `largest_message`-byte message included) fit in memory."""
        state = self.backend.state(largest_message)
        Budget(self.topology.npus, chunks_per_npu, **state).check_memory(what)

    def create_network(self, env: simpy.Environment | None = None, **options) -> Network:
        """The backend's Network on this plan's topology, with what the plan derived."""
        return create_network(self.config.backend, self.topology, config=self.config, env=env,
                              **self.backend.network_options(), **options)

    def with_garnet(self, **changes) -> NetworkPlan:
        """This plan with [garnet] keys changed (a run simulated again another way: netsim.app.runner)."""
        config = dataclasses.replace(self.config, garnet=dataclasses.replace(self.config.garnet, **changes))
        return NetworkPlan(config, self.topology, plan_class(config.backend)(config, self.topology))


def plan_network(config: NetworkConfig, what: str, chunks_per_npu: int = 0, largest_message: int = 0) -> NetworkPlan:
    """`config`'s plan: its topology built once its NPUs (and `chunks_per_npu` each) fit in memory, from the
    config alone; then checked with what the backend itself will hold (the packet backend's ports, VCs and
    the packets of a `largest_message`-byte message), so a runaway input is refused in a moment instead
    of growing for a minute. ConfigError naming `what` if not."""
    Budget(config.npus, chunks_per_npu).check_memory(what)
    topology = config.build_topology()
    plan = NetworkPlan(config, topology, plan_class(config.backend)(config, topology))
    plan.check(what, chunks_per_npu, largest_message)
    return plan
