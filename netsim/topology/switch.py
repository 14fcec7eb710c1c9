"""One switch with N NPUs attached: every message crosses two links and the switch.

On the packet backend every NPU has a router of its own by default (its NIC ports feed it, and it
feeds the switch); with `single_router = true` the NPUs' NICs attach to the switch directly, so the
whole network is one k-port router with its terminals (as BookSim's single-router networks).
"""

from __future__ import annotations

from dataclasses import dataclass

from netsim.config import as_bool, positive_int, setting
from netsim.topology.base import Topology
from netsim.topology.hierarchical import LevelSpec, build_levels
from netsim.units import parse_link_bandwidth, parse_time


@dataclass(frozen=True)
class SwitchSpec:
    """`kind = "switch"`: `npus`, link bandwidth and latency (each NPU-switch link)."""

    npus: int = setting(parse=positive_int, help="number of NPUs on the switch")
    bandwidth: float = setting(parse=parse_link_bandwidth, help="NPU-switch link bandwidth, e.g. '50GB/s'")
    latency: float = setting(parse=parse_time, help="NPU-switch link latency, e.g. '500ns'")
    router_latency: float = setting(0.0, parse=parse_time, help="latency through the switch")
    single_router: bool = setting(False, parse=as_bool, help="packet backend: NICs attach to the switch "
                                  "directly, no router per NPU (one k-port router with its terminals)")



def build_switch(spec: SwitchSpec, name: str) -> Topology:
    level = LevelSpec("switch", spec.npus, spec.bandwidth, spec.latency, router_latency=spec.router_latency)
    return build_levels(name, "switch", [level], direct_terminals=spec.single_router)
