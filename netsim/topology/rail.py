"""Rail-optimized GPU cluster: servers of GPUs joined inside by a scale-up switch (or a full mesh of
direct links), GPU g of every server on rail g's leaf switches, every leaf linked to every spine.

NPU s*G + g is GPU g of server s (G = gpus_per_server), so dimension 0 is the scale-up domain and
dimension 1 the rail across servers, as the system layer's hierarchical collectives expect.
Switch nodes follow the NPUs: the servers' scale-up switches, then the leaves rail by rail (rail g,
leaf i serves servers i*servers_per_leaf ..), then the spines.

Links carry `tier` in the graph: "scale-up", "rail" (GPU-leaf) or "spine" (leaf-spine).

Routing is dimension-ordered like the hierarchical topology's: first inside the source server to
the GPU of the destination's index (NCCL's PXN: traffic changes rails over the scale-up fabric, not
the spines), then along that rail: its leaf, and where the destination server hangs on another leaf
of the rail, up the spine of the destination server's index modulo the spines (d-mod-k) and down.
The spine is the pair's path choice (`Topology.path_bits`: multipath routing picks any spine).
Routes climb scale-up, then leaf, then spine, and never come back down a level before the
destination, so any VC may be used on every hop (up*/down*).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from netsim.config import choice, non_negative_int, positive_float, positive_int, setting
from netsim.topology.base import Dimension, Topology, add_link_pair, choice_width
from netsim.topology.graph import LinkGraph
from netsim.units import parse_link_bandwidth, parse_time


@dataclass(frozen=True)
class RailSpec:
    """`kind = "rail"`: `servers` x `gpus_per_server` GPUs, a scale-up fabric per server, a rail of leaves per GPU index."""

    servers: int = setting(parse=positive_int, help="number of servers")
    gpus_per_server: int = setting(parse=positive_int, help="GPUs per server (and rails)")
    bandwidth: float = setting(parse=parse_link_bandwidth, help="GPU-leaf (NIC) link bandwidth, e.g. '50GB/s'")
    latency: float = setting(parse=parse_time, help="latency of every leaf and spine link, e.g. '500ns'")
    scale_up_bandwidth: float = setting(parse=parse_link_bandwidth, help="scale-up link bandwidth, e.g. '450GB/s'")
    scale_up_latency: float = setting(parse=parse_time, help="scale-up link latency, e.g. '100ns'")
    scale_up: str = setting("switch", parse=choice("switch", "mesh"),
                            help="inside a server: a scale-up switch, or a full mesh of direct GPU-GPU links")
    servers_per_leaf: int = setting(0, parse=non_negative_int, help="servers on each leaf switch of a rail "
                                    "(default: all, one leaf per rail)")
    spines: int = setting(0, parse=non_negative_int, help="spine switches (needed when a rail has several leaves)")
    oversubscription: float = setting(1.0, parse=positive_float, help="a leaf's bandwidth down over its bandwidth "
                                      "up to the spines (1: non-blocking)")


class RailLayout:
    """Node ids of a rail-optimized cluster (see the module docstring)."""

    def __init__(self, spec: RailSpec):
        self.servers, self.gpus = spec.servers, spec.gpus_per_server
        self.npus = spec.servers * spec.gpus_per_server
        self.per_leaf = spec.servers_per_leaf or spec.servers
        self.leaves_per_rail = spec.servers // self.per_leaf
        self.spines = spec.spines
        scale_up_switches = spec.servers if spec.scale_up == "switch" and self.gpus > 1 else 0
        self.first_leaf = self.npus + scale_up_switches
        self.first_spine = self.first_leaf + self.gpus * self.leaves_per_rail

    def scale_up_switch(self, server: int) -> int | None:
        return self.npus + server if self.first_leaf > self.npus else None

    def leaf(self, rail: int, server: int) -> int:
        return self.first_leaf + rail * self.leaves_per_rail + server // self.per_leaf

    def spine(self, index: int) -> int:
        return self.first_spine + index


def rail_route(topo: Topology, src: int, dst: int, ties: int, layout: RailLayout) -> list[int]:
    """Scale-up to the destination's GPU index, then along its rail (see the module docstring); the
    spine d-mod-k plus `ties` (0 unless a multipath routing draws them: `spine_bits`)."""
    gpus = layout.gpus
    server, index = divmod(src, gpus)
    target_server, target_index = divmod(dst, gpus)
    path = [src]
    if index != target_index:
        switch = layout.scale_up_switch(server)
        if switch is not None:
            path.append(switch)
        path.append(server * gpus + target_index)
    if server != target_server:
        first, last = layout.leaf(target_index, server), layout.leaf(target_index, target_server)
        path.append(first)
        if first != last:
            path += [layout.spine((target_server + ties) % layout.spines), last]
        path.append(dst)
    return path


def spine_bits(src: int, dst: int, layout: RailLayout) -> int:
    """The tie bits a route reads: the spine choice, where it crosses leaves of a rail."""
    if src // layout.gpus // layout.per_leaf == dst // layout.gpus // layout.per_leaf:
        return 0
    return (1 << choice_width(layout.spines)) - 1


def build_rail(spec: RailSpec, name: str) -> Topology:
    if spec.servers_per_leaf and spec.servers % spec.servers_per_leaf:
        raise ValueError(f"rail: servers_per_leaf = {spec.servers_per_leaf} does not divide servers = {spec.servers}")
    layout = RailLayout(spec)
    if layout.leaves_per_rail > 1 and not spec.spines:
        raise ValueError(f"rail: a rail of {layout.leaves_per_rail} leaves needs spines (set spines >= 1)")
    if layout.leaves_per_rail == 1 and spec.spines:
        raise ValueError("rail: spines join the leaves of a rail, but each rail has one leaf "
                         "(set servers_per_leaf below servers, or drop spines)")
    gpus, npus = layout.gpus, layout.npus
    uplink = layout.per_leaf * spec.bandwidth / (spec.oversubscription * spec.spines) if spec.spines else 0.0
    graph = LinkGraph()
    graph.add_nodes_from(range(npus))
    for server in range(spec.servers):
        members = range(server * gpus, server * gpus + gpus)
        switch = layout.scale_up_switch(server)
        for gpu in members:
            if switch is not None:
                add_link_pair(graph, gpu, switch, spec.scale_up_bandwidth, spec.scale_up_latency, 0, tier="scale-up")
            elif spec.scale_up == "mesh":
                for other in members:
                    if other > gpu:
                        add_link_pair(graph, gpu, other, spec.scale_up_bandwidth, spec.scale_up_latency, 0,
                                      tier="scale-up")
            add_link_pair(graph, gpu, layout.leaf(gpu % gpus, server), spec.bandwidth, spec.latency, 1, tier="rail")
    for rail in range(gpus):
        for leaf in range(layout.leaves_per_rail):
            for spine in range(spec.spines):
                add_link_pair(graph, layout.leaf(rail, leaf * layout.per_leaf), layout.spine(spine), uplink,
                              spec.latency, 1, tier="spine")
    # cut between the first half of the servers and the rest: each rail's NICs, or its leaves' uplinks
    half = (npus // 2) * spec.bandwidth
    bisection = min(half, gpus * (layout.leaves_per_rail // 2) * spec.spines * uplink) if spec.spines else half
    scale_up_kind = "switch" if layout.scale_up_switch(0) is not None else "fully-connected"
    dims = [Dimension(scale_up_kind, gpus, spec.scale_up_bandwidth, spec.scale_up_latency),
            Dimension("switch", spec.servers, spec.bandwidth, spec.latency)]
    inside = 0 if gpus == 1 else 2 if scale_up_kind == "switch" else 1
    across = 0 if spec.servers == 1 else 4 if layout.leaves_per_rail > 1 else 2
    return Topology(name, "rail", graph, npus, dims, partial(rail_route, layout=layout), bisection, inside + across,
                    path_bits=partial(spine_bits, layout=layout))
