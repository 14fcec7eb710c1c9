"""The `[garnet]` table: every packet-backend parameter, its unit, meaning and default, in one place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from netsim.config import choice, non_negative_int, positive_float, positive_int, setting


@dataclass(frozen=True)
class GarnetConfig:
    """Packet-backend parameters (`--set garnet.KEY=VALUE` overrides any of them)."""

    clock_ghz: float = setting(1.0, parse=positive_float, help="router clock in GHz (1 cycle = 1/clock_ghz ns)")
    flit_bytes: int = setting(64, parse=positive_int, help="bytes per flit")
    packet_bytes: int = setting(1024, parse=positive_int, help="bytes per packet (a message's last packet may be shorter)")
    vcs: int = setting(4, parse=positive_int, help="virtual channels per input port (tori need >= 2 for the dateline)")
    buffer_flits: int = setting(4, parse=positive_int, help="flits of buffer per VC at router input ports")
    switch_buffer_flits: Optional[int] = setting(None, parse=positive_int, help="flits per VC at switch input ports (default: buffer_flits)")
    router_latency: int = setting(1, parse=positive_int, cycles=True, help="router pipeline depth in cycles (1 = Garnet, 4 = BookSim RC/VA/SA/ST)")
    link_latency: Optional[int] = setting(None, parse=non_negative_int, cycles=True, help="link latency in cycles (default: the topology's latency times the clock)")
    vc_release: str = setting("tail-credit", parse=choice("tail-credit", "tail-sent"), help="when an upstream VC may be reallocated: tail's credit returned (Garnet) or tail sent (BookSim)")
    fidelity: str = setting("flit", parse=choice("flit", "packet"), help="flit-accurate, or packets moving as units (virtual cut-through)")
    deadlock_cycles: int = setting(100000, parse=positive_int, help="cycles with flits in flight and none moving before a deadlock is reported")
