"""Turn the `[garnet]` table and a topology into per-link and per-port numbers (cycles, flits).

Derived defaults (documented in `GarnetConfig`) keep an idle network at full link bandwidth:
- flit_bytes: what the widest link carries in one cycle, so every link moves at most one flit per
  cycle and links whose bandwidth divides it run at exactly their bandwidth;
- buffer_flits: a port's credit round trip in flits, `ceil((2 * latency + cpf + pipeline) / cpf)`
  (a credit is usable upstream the cycle after a flit leaves plus the link latency, one cycle
  sooner at a NIC), so one VC can stream without waiting for credits; a NIC's ejection VCs cover
  their own round trip (the NIC consumes flits as they arrive);
- packet_bytes: twice the longest credit round trip in flits, so that two VCs (one dateline class)
  keep a link busy even though a VC is released only when its tail's credit returns (one round
  trip is the bare minimum; the second absorbs slower links further along the route).
With `fidelity = "packet"` a derived buffer holds at least one whole packet (virtual cut-through
needs it), two under tail-sent release: there a VC takes the next packet once the last one's tail
has left, and with room for two, packets stream through a VC back to back as in flit fidelity
(with room for one, each would wait for the whole previous packet to drain: up to 1.5x slower
collectives under contention). A buffer set explicitly smaller than a packet is an error
(`check_whole_packets`).
"""

from __future__ import annotations

import math

from netsim.errors import ConfigError
from netsim.garnet.config import GarnetConfig
from netsim.topology import Link, Topology
from netsim.units import UnitError, ns_to_cycles, parse_cycles


def _cycles(raw, clock_ghz: float, key: str) -> int:
    try:
        cycles = parse_cycles(raw, clock_ghz)
    except UnitError as exc:
        raise ConfigError(f"garnet.{key}: {exc}") from None
    if cycles < 1:
        raise ConfigError(f"garnet.{key}: links take at least 1 cycle, got {raw!r}")
    return cycles


class Params:
    """Resolved packet-backend numbers for one topology."""

    def __init__(self, config: GarnetConfig, topology: Topology):
        self.config = config
        self.topology = topology
        self.clock_ghz = config.clock_ghz
        widest = max((link.bandwidth for link in topology.links), default=config.clock_ghz)
        self.flit_bytes = config.flit_bytes or max(1, math.floor(widest / config.clock_ghz + 1e-9))
        links = topology.links
        self._check_dims({link.dim for link in links if link.dim >= 0})
        self.link_latency = [self._link_latency(link) for link in links]
        self.link_cpf = [self.cycles_per_flit(link.bandwidth) for link in links]
        self.whole_packets = config.fidelity == "packet"
        self.release_on_sent = config.vc_release == "tail-sent"
        if config.packet_bytes is not None:
            self.packet_bytes = config.packet_bytes
        else:
            round_trips = [self.round_trip_flits(lat, cpf, self.pipeline(link.dst), 1)
                           for link, lat, cpf in zip(links, self.link_latency, self.link_cpf)]
            self.packet_bytes = 2 * max(round_trips, default=1) * self.flit_bytes

    def _check_dims(self, dims: set[int]) -> None:
        """Per-dimension overrides name dimensions the topology has (a user numbering them from 1
        would otherwise see the override change nothing)."""
        for dim, _ in self.config.dim:
            if dim not in dims:
                raise ConfigError(f"garnet.dim.{dim}: the network has no dimension {dim} (its dimensions: "
                                  f"{', '.join(map(str, sorted(dims))) or 'none'}; they count from 0)")

    def _link_latency(self, link: Link) -> int:
        raw = self.config.for_dim(link.dim, "link_latency")
        if raw is not None:
            return _cycles(raw, self.clock_ghz, f"dim.{link.dim}.link_latency")
        if self.config.link_latency is not None:
            return self.config.link_latency
        return max(1, ns_to_cycles(link.latency, self.clock_ghz))

    def cycles_per_flit(self, bandwidth: float) -> int:
        """Cycles a link of `bandwidth` GB/s is busy per flit (>= 1)."""
        return max(1, math.ceil(self.flit_bytes * self.clock_ghz / bandwidth - 1e-9))

    def pipeline(self, node: int) -> int:
        """Router pipeline cycles of `node`: router_latency, plus a switch's own latency."""
        extra = self.topology.switch_latency.get(node, 0.0)
        return self.config.router_latency + ns_to_cycles(extra, self.clock_ghz)

    @staticmethod
    def round_trip_flits(latency: int, cpf: int, pipeline: int, sa_stage: int) -> int:
        """Flits one VC sends before the credit of its first flit is usable again, over a link of
        `latency` cycles and `cpf` cycles per flit into a router of `pipeline` cycles, from a router
        (`sa_stage` 1: it allocates the cycle before a flit leaves) or a NIC (0)."""
        return max(1, math.ceil((2 * latency + cpf - 1 + sa_stage + pipeline) / cpf))

    def vcs(self, dim: int) -> int:
        override = self.config.for_dim(dim, "vcs")
        return override if override is not None else self.config.vcs

    def buffer_flits(self, node: int, dim: int, latency: int, cpf: int) -> int:
        """Flits per VC at the input port of `node` fed by a link of dimension `dim`."""
        override = self.config.for_dim(dim, "buffer_flits")
        if override is not None:
            return override
        if self.topology.is_switch(node) and self.config.switch_buffer_flits is not None:
            return self.config.switch_buffer_flits
        if self.config.buffer_flits is not None:
            return self.config.buffer_flits
        return self._derived_depth(self.round_trip_flits(latency, cpf, self.pipeline(node), 1))

    def nic_buffer_flits(self, node: int, latency: int, cpf: int) -> int:
        """Flits per VC at the injection port into router `node`, fed by a NIC over a link of
        `latency` cycles and `cpf` cycles per flit (1 and 1 but when NPUs attach to a switch)."""
        if self.config.buffer_flits is not None:
            return self.config.buffer_flits
        return self._derived_depth(self.round_trip_flits(latency, cpf, self.pipeline(node), 0))

    def nic_eject_flits(self, round_trip: int) -> int:
        """Flits per VC at a NIC's ejection port whose credits are back `round_trip` cycles after
        a flit leaves the router."""
        if self.config.buffer_flits is not None:
            return self.config.buffer_flits
        return self._derived_depth(round_trip)

    def _derived_depth(self, round_trip: int) -> int:
        if self.whole_packets:  # room for a packet; two under tail-sent release (see the module docstring)
            packets = 2 if self.release_on_sent else 1
            return max(round_trip, packets * self.packet_flits(self.packet_bytes))
        return round_trip

    def packet_flits(self, packet_bytes: int) -> int:
        return -(-packet_bytes // self.flit_bytes)

    def check_whole_packets(self, packet_bytes: int, depths, size_key: str = "garnet.packet_bytes") -> None:
        """Packet fidelity needs every VC buffer (`depths`: (port name, flits)) to hold a packet of
        `packet_bytes` (set by `size_key`, named in the error)."""
        if not self.whole_packets:
            return
        need = self.packet_flits(packet_bytes)
        for name, depth in depths:
            if depth < need:
                raise ConfigError(f"garnet.fidelity = 'packet' needs VC buffers that hold a whole packet: "
                                  f"{need} flits of {self.flit_bytes} bytes, but {name} holds {depth} "
                                  f"(raise garnet.buffer_flits, lower {size_key}, or use fidelity = 'flit')")

    def nic_cycles(self, dims) -> int:
        """Extra cycles for the topology's NIC latency: twice per dimension crossed (as analytical)."""
        ns = 2 * sum(self.topology.nic_latency[d] for d in set(dims) if d >= 0)
        return ns_to_cycles(ns, self.clock_ghz)
