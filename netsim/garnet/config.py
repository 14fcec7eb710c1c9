"""The `[garnet]` table: every packet-backend parameter, its unit, meaning and default, in one place.

Sizes left unset are derived from the topology so that an idle network runs every link at its
full bandwidth (see `netsim.garnet.params`): flits as wide as the widest link carries per cycle,
buffers that cover a link's credit round trip, packets long enough that two VCs keep a link busy.
`[garnet.dim.N]` sub-tables override `vcs`, `buffer_flits` and `link_latency` for the links and
input ports of dimension N.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from netsim.config import choice, clock_frequency, positive_int, setting
from netsim.garnet.allocators import ALLOCATORS
from netsim.garnet.routing import ROUTING
from netsim.units import UnitError, parse_cycles

DIM_KEYS = ("vcs", "buffer_flits", "link_latency")


def dim_overrides(value: Any) -> tuple:
    """`{"1": {"buffer_flits": 8}}` -> ((1, (("buffer_flits", 8),)),); link_latency stays raw (needs the clock)."""
    if not isinstance(value, dict):
        raise UnitError(f"expected tables like [garnet.dim.0], got {value!r}")
    result = []
    for dim, table in sorted(value.items(), key=lambda item: str(item[0])):
        if not str(dim).isdecimal():
            raise UnitError(f"expected a dimension number like [garnet.dim.0], got [garnet.dim.{dim}]")
        if not isinstance(table, dict):
            raise UnitError(f"[garnet.dim.{dim}]: expected a table, got {table!r}")
        items = []
        for key, raw in table.items():
            if key not in DIM_KEYS:
                raise UnitError(f"[garnet.dim.{dim}]: unknown key '{key}' (expected one of {', '.join(DIM_KEYS)})")
            try:
                if key == "link_latency":
                    parse_cycles(raw, 1.0)  # checked here, read with the clock by Params
                else:
                    raw = positive_int(raw)
            except UnitError as exc:
                raise UnitError(f"[garnet.dim.{dim}] {key}: {exc}") from None
            items.append((key, raw))
        result.append((int(dim), tuple(items)))
    return tuple(result)


@dataclass(frozen=True)
class GarnetConfig:
    """Packet-backend parameters (`--set garnet.KEY=VALUE` overrides any of them)."""

    clock_ghz: float = setting(1.0, parse=clock_frequency, help="router clock in GHz (1 cycle = 1/clock_ghz ns)")
    flit_bytes: Optional[int] = setting(None, parse=positive_int, help="bytes per flit (default: what the widest link carries in one cycle)")
    packet_bytes: Optional[int] = setting(None, parse=positive_int, help="bytes per packet, a message's last packet may be shorter (default: twice the longest link's credit round trip in flits)")
    vcs: int = setting(4, parse=positive_int, help="virtual channels per input port (tori need >= 2 for the dateline)")
    buffer_flits: Optional[int] = setting(None, parse=positive_int, help="flits of buffer per VC at router input ports (default: the port's credit round trip, so one VC streams at full rate)")
    switch_buffer_flits: Optional[int] = setting(None, parse=positive_int, help="flits per VC at switch input ports (default: buffer_flits)")
    router_latency: int = setting(1, parse=positive_int, cycles=True, help="router pipeline depth in cycles (1 = Garnet, 4 = BookSim RC/VA/SA/ST)")
    allocator: str = setting("garnet", parse=choice(*ALLOCATORS), help="router model: garnet (separable input-first switch allocation, the downstream VC chosen for the winner: an equal share per input port) or booksim (BookSim's iq router: iSLIP VC then switch allocation, its stage timing; router_latency >= 3)")
    routing: str = setting("dor", parse=choice(*ROUTING), help="routing unit (each topology kind lists those deadlock-free on it, the first its default): dor (dimension order; on rings a dateline class switch at the wrap link; a fabric's default paths), dor-booksim (the ring class chosen on entering a ring, as BookSim), dragonfly-min (a dragonfly's minimal routes, the class switching at the global link), ecmp (a fat-tree's or rail cluster's minimal path hashed per message), spray (drawn per packet), adaptive (minimal; fat-tree, rail: per hop the candidate output with the most free credits; mesh, torus: an escape VC beside adaptive ones, as BookSim's min_adapt), valiant (through a random intermediate node; mesh, torus), romm (through one in the minimal quadrant; mesh), xy-yx (XY or YX per packet; mesh), ugal (UGAL-L on a dragonfly: minimal or through a random router, by the source router's queues); antipode ties broken at random per message")
    link_latency: Optional[int] = setting(None, parse=positive_int, cycles=True, help="link latency in cycles (default: the topology's latency times the clock, rounded up)")
    vc_release: str = setting("tail-credit", parse=choice("tail-credit", "tail-sent"), help="when an upstream VC may be reallocated: tail's credit returned (Garnet) or tail sent (BookSim)")
    nic_ports: str = setting("per-link", parse=choice("per-link", "single"), help="NIC ports of an NPU: one injection and one ejection port per link of its router, so it drives every link at once as the analytical model assumes (per-link), or one of each shared by all links, at most one flit per cycle in and out (single: Garnet's and BookSim's NI)")
    fidelity: str = setting("flit", parse=choice("flit", "packet"), help="flit-accurate, or packets moving as units (virtual cut-through)")
    deadlock_cycles: int = setting(100000, parse=positive_int, help="cycles a router may hold ready flits without sending one before a deadlock is reported")
    fast_forward: str = setting("partitions", parse=choice("partitions", "network", "off"), help="skipping repeated steady states, exactly (the same results): per partition, groups of messages that share no port, each on its own (partitions; a run where a message would start through a partition skipped ahead is simulated again with network), only when the whole network repeats (network), or never (off)")
    symmetry: str = setting("quotient", parse=choice("quotient", "copies"), help="a symmetric collective (one NPU standing for all) on a torus whose messages repeat every m NPUs along each ring: simulated on the torus of m NPUs per ring, every statistic read back onto each copy (quotient; the same results), or with every member's copy sent through the whole torus (copies)")
    dim: tuple = setting((), parse=dim_overrides, help="per-dimension overrides: [garnet.dim.N] with vcs, buffer_flits, link_latency")

    def for_dim(self, dim: int, key: str) -> Any:
        """The per-dimension override of `key` for dimension `dim` (as `dim_overrides` stored it), or None."""
        for number, items in self.dim:
            if number == dim:
                for name, value in items:
                    if name == key:
                        return value
        return None

