"""Two-level fat-tree: NPUs on leaf switches, every leaf linked to every spine; up/down routing."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import networkx as nx

from netsim.config import positive_int, setting
from netsim.topology.base import Dimension, Topology, add_link_pair
from netsim.units import parse_link_bandwidth, parse_time


@dataclass(frozen=True)
class FatTreeSpec:
    """`kind = "fat-tree"`: leaves x npus_per_leaf NPUs, `spines` spine switches."""

    leaves: int = setting(parse=positive_int, help="number of leaf switches")
    npus_per_leaf: int = setting(parse=positive_int, help="NPUs attached to each leaf")
    spines: int = setting(parse=positive_int, help="number of spine switches")
    bandwidth: float = setting(parse=parse_link_bandwidth, help="NPU-leaf link bandwidth, e.g. '50GB/s'")
    latency: float = setting(parse=parse_time, help="link latency (every link), e.g. '500ns'")
    uplink_bandwidth: float = setting(0.0, parse=parse_link_bandwidth,
                                      help="leaf-spine link bandwidth (default: same as bandwidth)")

    @property
    def npu_count(self) -> int:
        """NPUs the spec asks for, known before the graph is built (netsim.budget)."""
        return self.leaves * self.npus_per_leaf


def up_down_route(topo: Topology, src: int, dst: int, ties: int, spec: FatTreeSpec) -> list[int]:
    """Up to the nearest common ancestor and down; the spine is chosen by destination (d-mod-k),
    so no route has a tie (`ties` is unused)."""
    if src == dst:
        return [src]
    leaf_src = topo.npus + src // spec.npus_per_leaf
    leaf_dst = topo.npus + dst // spec.npus_per_leaf
    if leaf_src == leaf_dst:
        return [src, leaf_src, dst]
    spine = topo.npus + spec.leaves + dst % spec.spines
    return [src, leaf_src, spine, leaf_dst, dst]


def build_fat_tree(spec: FatTreeSpec, name: str) -> Topology:
    npus = spec.leaves * spec.npus_per_leaf
    uplink = spec.uplink_bandwidth or spec.bandwidth
    graph = nx.DiGraph()
    graph.add_nodes_from(range(npus))
    for npu in range(npus):
        add_link_pair(graph, npu, npus + npu // spec.npus_per_leaf, spec.bandwidth, spec.latency, 0)
    for leaf in range(spec.leaves):
        for spine in range(spec.spines):
            add_link_pair(graph, npus + leaf, npus + spec.leaves + spine, uplink, spec.latency, 0)
    half_leaves = spec.leaves // 2
    bisection = min((npus // 2) * spec.bandwidth,
                    half_leaves * spec.spines * uplink if spec.leaves > 1 else float("inf"))
    dims = [Dimension("switch", npus, spec.bandwidth, spec.latency)]
    diameter = 4 if spec.leaves > 1 else 2 if spec.npus_per_leaf > 1 else 0  # up to a spine and down
    return Topology(name, "fat-tree", graph, npus, dims, partial(up_down_route, spec=spec), bisection, diameter)
