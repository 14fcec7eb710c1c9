"""Packet statistics (aggregated as packets arrive: memory does not grow with packets sent) and
the per-link, per-NIC and per-VC tables of `GarnetNetwork.stats()`."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from netsim.garnet.routing import HOPS

if TYPE_CHECKING:
    import pandas as pd


class PacketStats:
    """Counts, latency sums and a latency histogram (cycles) of arrived packets."""

    __slots__ = ("packets", "flits", "bytes", "latency", "network_latency", "hops", "histogram")

    def __init__(self):
        self.packets = 0
        self.flits = 0
        self.bytes = 0
        self.latency = 0  # sum over packets: tail arrival - creation (source queueing + network)
        self.network_latency = 0  # sum: tail arrival - head injection
        self.hops = 0
        self.histogram: Counter = Counter()  # packet latency -> packets

    def add(self, packet, cycle: int) -> int:
        """Count `packet`, arrived at `cycle`; returns its latency."""
        message = packet.msg
        latency = cycle - message.created
        self.packets += 1
        self.flits += packet.nflits
        self.bytes += packet.nbytes
        self.latency += latency
        self.network_latency += cycle - packet.injected
        self.hops += packet.route.get(HOPS, message.route[1])  # router-to-router links (a packet's own route's)
        self.histogram[latency] += 1
        return latency

    def summary(self) -> dict:
        n = self.packets or 1
        return {
            "packets": self.packets,
            "flits": self.flits,
            "bytes": self.bytes,
            "avg_packet_latency_cycles": self.latency / n,
            "p99_packet_latency_cycles": percentile(self.histogram, 0.99),
            "avg_network_latency_cycles": self.network_latency / n,
            "avg_source_queueing_cycles": (self.latency - self.network_latency) / n,
            "avg_hops": self.hops / n,
        }


def percentile(histogram: Counter, q: float) -> float:
    """The smallest value at or below which a fraction `q` of the samples lie (0 if none)."""
    total = sum(histogram.values())
    if not total:
        return 0.0
    threshold = q * total
    seen = 0
    for value in sorted(histogram):
        seen += histogram[value]
        if seen >= threshold:
            return float(value)
    return float(max(histogram))


def link_extra(network) -> dict:
    """Extra per-link columns (topology link order): flits, busy cycles, buffers, credit stalls."""
    cycles = max(1, network.clock.now_cycle())
    ns = network.clock.ns
    outs = network.link_units
    nan = float("nan")  # a NIC's ejection buffer is not modelled as flits held
    return {
        "flits": [o.flits for o in outs],
        "busy_cycles": [o.flits * o.cpf for o in outs],
        "cycles_per_flit": [o.cpf for o in outs],
        "latency_cycles": list(network.params.link_latency),
        "mean_buffer_flits": [nan if o.ejects else o.dst_port.residency / cycles for o in outs],
        "max_vc_flits": [nan if o.ejects else max(vc.peak for vc in o.dst_vcs) for o in outs],
        "buffer_flits_per_vc": [o.depth for o in outs],
        "credit_stall_time_ns": [ns(o.stall) for o in outs],
    }


def vc_frame(network) -> pd.DataFrame:
    """One row per input port and VC: the most flits it held and its mean occupancy over the run."""
    import pandas as pd

    cycles = max(1, network.clock.now_cycle())
    rows = [{"router": router.node, "port": port.name, "link_id": port.link_id, "vc": vc.index,
             "max_flits": vc.peak, "mean_flits": vc.residency / cycles, "buffer_flits": port.depth}
            for router in network.routers for port in router.inputs for vc in port.vcs]
    return pd.DataFrame(rows, columns=["router", "port", "link_id", "vc", "max_flits", "mean_flits", "buffer_flits"])


def nic_frame(network) -> pd.DataFrame:
    """One row per NIC port: injection ('nic-npu') and ejection ('npu-nic') of every NPU, with the
    router link it feeds or drains (-1 for a single port shared by all links)."""
    import pandas as pd

    cycles = max(1, network.clock.now_cycle())
    rows = [{"npu": npu, "kind": kind, "link_id": link_id, "flits": port.flits, "bytes": port.bytes,
             "busy_cycles": port.flits * port.cpf, "utilization": port.flits * port.cpf / cycles,
             "credit_stall_time_ns": network.clock.ns(port.stall)}
            for npu, kind, link_id, port in network.nic_ports]
    return pd.DataFrame(rows)
