"""The packet backend's settings in force on a network: flit, packet and buffer sizes, VCs, clock,
link cycles and the credit round trip, as `netsim.garnet.params.Params` resolves them (most are
derived from the topology when left unset, and they decide the answer: packets 26x larger halve an
all-reduce at small buffers). Shown in the live view's header, by `netsim topo --backend garnet`
and in summary.json (`packet_settings`), so a reader sees what ran.

A figure that differs between links or ports is given as [smallest, largest].
"""

from __future__ import annotations

from netsim.garnet.config import GarnetConfig
from netsim.garnet.params import Params
from netsim.topology import Topology


def _span(values) -> int | list[int]:
    """One number when all are equal, else [smallest, largest]; 0 for no values."""
    values = list(values)
    if not values:
        return 0
    low, high = min(values), max(values)
    return low if low == high else [low, high]


def packet_settings(config: GarnetConfig, topology: Topology) -> dict:
    """What the packet backend uses on `topology` with `config` (see the module docstring): router
    input ports are counted (a NIC's ports follow the same rule)."""
    params = Params(config, topology)
    links = topology.links
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


def _shown(value) -> str:
    return f"{value[0]}-{value[1]}" if isinstance(value, list) else f"{value:g}" if isinstance(value, float) \
        else str(value)


def settings_line(settings: dict) -> str:
    """`packet_settings` in one line, for a view's header or a table."""
    return (f"flit {settings['flit_bytes']} B, packet {settings['packet_bytes']:,} B "
            f"({settings['packet_flits']} flits), buffer {_shown(settings['buffer_flits'])} flits x "
            f"{_shown(settings['vcs'])} VCs, clock {_shown(settings['clock_ghz'])} GHz, link "
            f"{_shown(settings['link_latency_cycles'])} cycles, credit round trip "
            f"{_shown(settings['credit_round_trip_cycles'])} cycles")
