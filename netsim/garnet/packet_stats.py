"""Packet statistics of a run: counts, latency sums and a latency histogram, aggregated as tails
arrive (memory does not grow with packets sent). Counted per packet, so compiled with the core."""

from __future__ import annotations

from netsim.garnet.routing import HOPS


class PacketStats:
    """Counts, latency sums and a latency histogram (cycles) of arrived packets."""

    __slots__ = ("cut", "packets", "flits", "bytes", "latency", "network_latency", "hops", "histogram")

    def __init__(self):
        self.cut = 0  # packets cut from their messages by the NICs (`cut - packets` are in the network)
        self.packets = 0
        self.flits = 0
        self.bytes = 0
        self.latency = 0  # sum over packets: tail arrival - creation (source queueing + network)
        self.network_latency = 0  # sum: tail arrival - head injection
        self.hops = 0
        self.histogram: dict[int, int] = {}  # packet latency -> packets (a dict: the compiled build reads it as one)

    def cut_one(self) -> None:
        """A NIC has cut a packet from its message (it is in the network until `add`)."""
        self.cut += 1

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
        histogram = self.histogram
        histogram[latency] = histogram.get(latency, 0) + 1
        return latency

    def times(self, copies: int) -> PacketStats:
        """These statistics `copies` times over: a quotient's packets read as those of every copy of it
        (quotient.py)."""
        total = PacketStats()
        total.cut, total.packets, total.flits = self.cut * copies, self.packets * copies, self.flits * copies
        total.bytes, total.hops = self.bytes * copies, self.hops * copies
        total.latency, total.network_latency = self.latency * copies, self.network_latency * copies
        total.histogram = {cycles: packets * copies for cycles, packets in self.histogram.items()}
        return total

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


class WindowTally:
    """Synthetic traffic's count of the packets that arrive, against its measured window of cycles
    [warmup, end): the flits accepted in it, and the statistics of the packets created in it (run per
    packet, so compiled with the core rather than a Python call each)."""

    __slots__ = ("warmup", "end", "accepted_flits", "measured_in", "stats")

    def __init__(self, warmup: int, end: int):
        self.warmup = warmup
        self.end = end
        self.accepted_flits = 0  # flits arrived in the window
        self.measured_in = 0  # packets created in the window (one per message) that have arrived
        self.stats = PacketStats()  # packets created in the window, as they arrive

    def observe(self, packet, cycle: int) -> None:
        """`packet` has arrived at `cycle` (a network's `packet_observer`)."""
        if self.warmup <= cycle < self.end:
            self.accepted_flits += packet.nflits
        created = packet.msg.created
        if self.warmup <= created < self.end:
            self.measured_in += 1
            self.stats.add(packet, cycle)


def percentile(histogram: dict[int, int], q: float) -> float:
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
