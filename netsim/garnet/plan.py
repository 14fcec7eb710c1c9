"""The packet backend's plan (netsim.network_plan.BackendPlan): its Params, resolved once per network
from the `[garnet]` table and the topology; the settings in force that a reader sees (flit, packet and
buffer sizes, VCs, clock, link cycles and the credit round trip: most are derived from the topology when
left unset, and they decide the answer: packets 26x larger halve an all-reduce at small buffers), shown
in the live view's header, by `netsim topo --backend garnet` and in summary.json (`packet_settings`);
what the network will hold, counted before it is built (netsim.budget); and its summary entries.

A figure that differs between links or ports is given as [smallest, largest].
"""

from __future__ import annotations

from functools import cached_property

from netsim.garnet.params import Params
from netsim.network_plan import BackendPlan


def _span(values) -> int | list[int]:
    """One number when all are equal, else [smallest, largest]; 0 for no values."""
    values = list(values)
    if not values:
        return 0
    low, high = min(values), max(values)
    return low if low == high else [low, high]


def _shown(value) -> str:
    return f"{value[0]}-{value[1]}" if isinstance(value, list) else f"{value:g}" if isinstance(value, float) \
        else str(value)


class PacketPlan(BackendPlan):
    """The packet backend's plan: its Params, made once and handed to the network it plans."""

    label = "packet backend"
    settings_key = "packet_settings"

    @cached_property
    def params(self) -> Params:
        return Params(self.config.garnet, self.topology)

    def network_options(self) -> dict:
        return {"params": self.params}

    @cached_property
    def _settings(self) -> dict:
        params, config, links = self.params, self.config.garnet, self.topology.links
        depths, vcs, round_trips = [], [], []
        for link, latency, cpf in zip(links, params.link_latency, params.link_cpf):
            depths.append(params.buffer_flits(link.dst, link.dim, latency, cpf))
            vcs.append(params.vcs(link.dim))
            # a flit leaves, crosses the link into the next router's pipeline; its credit comes back over the link
            round_trips.append(2 * latency + cpf + params.pipeline(link.dst))
        return {
            "clock_ghz": params.clock_ghz,
            "cycle_ns": 1.0 / params.clock_ghz,
            "flit_bytes": params.flit_bytes,
            "packet_bytes": params.packet_bytes,
            "packet_flits": params.packet_flits(params.packet_bytes),
            "buffer_flits": _span(depths),
            "vcs": _span(vcs) if links else config.vcs,
            "link_latency_cycles": _span(params.link_latency),
            "cycles_per_flit": _span(params.link_cpf),
            "credit_round_trip_cycles": _span(round_trips),
            "router_latency_cycles": config.router_latency,
            "vc_release": config.vc_release,
            "fidelity": config.fidelity,
        }

    def settings(self) -> dict:
        """What the packet backend uses (see the module docstring): router input ports are counted (a
        NIC's ports follow the same rule)."""
        return dict(self._settings)

    def settings_line(self) -> str:
        settings = self._settings
        return (f"flit {settings['flit_bytes']} B, packet {settings['packet_bytes']:,} B "
                f"({settings['packet_flits']} flits), buffer {_shown(settings['buffer_flits'])} flits x "
                f"{_shown(settings['vcs'])} VCs, clock {_shown(settings['clock_ghz'])} GHz, link "
                f"{_shown(settings['link_latency_cycles'])} cycles, credit round trip "
                f"{_shown(settings['credit_round_trip_cycles'])} cycles")

    def state(self, largest_message: int) -> dict:
        """What the packet backend will hold on the topology, counted as GarnetNetwork builds it but
        without building it: `ports` (an input port per link into a router and per NIC injection port),
        their `vcs` and the packets of a `largest_message`-byte message (Budget's fields). NIC ejection
        ports hold no VCs of their own and are left out."""
        topology, config, params = self.topology, self.config.garnet, self.params
        direct = topology.direct_terminals
        routed = [not (direct and npu < topology.npus) for npu in range(topology.npus)]
        ports = vcs = 0
        outgoing = [0] * topology.npus
        for link in topology.links:
            src_routed = link.src >= topology.npus or routed[link.src]
            if link.src < topology.npus and src_routed:
                outgoing[link.src] += 1
            if link.dst >= topology.npus or routed[link.dst]:
                ports += 1
                vcs += params.vcs(link.dim) if src_routed else config.vcs
        per_link = config.nic_ports == "per-link"
        injection = sum((count if per_link else 1) for count, has_router in zip(outgoing, routed) if has_router)
        return {"ports": ports + injection, "vcs": vcs + injection * config.vcs,
                "message_packets": -(-largest_message // params.packet_bytes)}

    def summary(self, network) -> dict:
        return {self.settings_key: self.settings(), "fast_forward": network.fast_forward_figures(),
                "folded_to": network.folded_to()}
