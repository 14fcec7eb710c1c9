"""Fat-trees: a k-ary n-tree wired as BookSim's `fattree` (`levels`, `radix`), or the two-level form
(`leaves`, `npus_per_leaf`, `spines`: NPUs on leaf switches, every leaf linked to every spine).

k-ary n-tree (BookSim's numbering, checked against its link table in the tests): k^n NPUs and n
levels of k^(n-1) switches, level 0 the roots and level n-1 the leaves; switch (l, w) is node
npus + l*k^(n-1) + w. Write w as n-1 base-k digits, most significant first: down port j of
(l, w) leads to (l+1, w with digit l set to j), so every switch has k children and (below the
roots) k parents, and leaf w holds NPUs k*w .. k*w+k-1 directly (no router of their own, as
BookSim's terminals). `oversubscription` tapers each level: the links above level n-1-i carry
1/oversubscription[i] of the bandwidth of the links below it.

Routing is up*/down* through the nearest common ancestor (BookSim's `nca`); a message's packets
stay on one path. Going up, the i-th up hop takes the parent named by digit n-1-i of the
destination (`up_ports = "d-mod-k"`, the default: all traffic to one NPU converges on one root),
or that digit plus a number drawn per message (`"random"`, BookSim's `nca`, which draws the up port
per packet: a synthetic-traffic message is one packet). The draw is the message's route tie bits
(`Topology.tie_dims`, log2 k bits per up hop), from the run's seed, on every backend alike.
Either way the up-port bits are the tree's path-choice bits (`Topology.path_bits`), so multipath
routing (ECMP, spraying, adaptive) chooses among all up ports; two levels choose the spine likewise
(`choice_width` bits, the spine d-mod-k plus their value, modulo the spines).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

from netsim.config import choice, list_of, non_negative_int, positive_float, setting
from netsim.topology.base import Dimension, Topology, add_link_pair, choice_width
from netsim.topology.graph import LinkGraph
from netsim.units import parse_link_bandwidth, parse_time

TWO_LEVEL_KEYS = ("leaves", "npus_per_leaf", "spines")
TREE_KEYS = ("levels", "radix")


@dataclass(frozen=True)
class FatTreeSpec:
    """`kind = "fat-tree"`: a k-ary n-tree (`levels`, `radix`) or two levels (`leaves`, `npus_per_leaf`, `spines`)."""

    bandwidth: float = setting(parse=parse_link_bandwidth, help="NPU-leaf link bandwidth, e.g. '50GB/s'")
    latency: float = setting(parse=parse_time, help="link latency (every link), e.g. '500ns'")
    levels: int = setting(0, parse=non_negative_int, help="k-ary n-tree: number of switch levels n")
    radix: int = setting(0, parse=non_negative_int, help="k-ary n-tree: children (and parents) per switch k")
    oversubscription: tuple = setting((), parse=list_of(positive_float),
                                      help="k-ary n-tree: per level from the leaves up, bandwidth below over "
                                           "bandwidth above (levels - 1 numbers; default all 1)")
    up_ports: str = setting("d-mod-k", parse=choice("d-mod-k", "random"),
                            help="k-ary n-tree: the parent of each up hop by the destination's digit (d-mod-k) "
                                 "or at random per message (BookSim's nca; radix a power of two)")
    leaves: int = setting(0, parse=non_negative_int, help="two levels: number of leaf switches")
    npus_per_leaf: int = setting(0, parse=non_negative_int, help="two levels: NPUs attached to each leaf")
    spines: int = setting(0, parse=non_negative_int, help="two levels: number of spine switches")
    uplink_bandwidth: float = setting(0.0, parse=parse_link_bandwidth,
                                      help="two levels: leaf-spine link bandwidth (default: same as bandwidth)")



def fat_tree_npus(spec: FatTreeSpec) -> int:
    """NPUs of a fat-tree spec, without building it (up-front budgets): k^n for a k-ary n-tree (capped
    at 2^63 rather than computed when larger), leaves x NPUs per leaf for two levels."""
    if spec.levels:
        return spec.radix ** spec.levels if spec.levels * math.log2(max(spec.radix, 2)) < 63 else 2**63
    return spec.leaves * spec.npus_per_leaf


def build_fat_tree(spec: FatTreeSpec, name: str) -> Topology:
    """The form the spec's keys name; a mix of both forms, or an incomplete one, is an error."""
    tree = [key for key in TREE_KEYS if getattr(spec, key)]
    two_level = [key for key in TWO_LEVEL_KEYS if getattr(spec, key)]
    if tree and two_level:
        raise ValueError(f"fat-tree: give either {' and '.join(TREE_KEYS)} (a k-ary n-tree) or "
                         f"{', '.join(TWO_LEVEL_KEYS)} (two levels), not {', '.join(tree + two_level)} together")
    if two_level or not tree:
        missing = [key for key in TWO_LEVEL_KEYS if not getattr(spec, key)]
        if missing:
            raise ValueError(f"fat-tree: missing {', '.join(missing)} (each a whole number >= 1; or give "
                             "levels and radix for a k-ary n-tree)")
        if spec.up_ports != "d-mod-k":
            raise ValueError("fat-tree: up_ports applies to a k-ary n-tree (levels, radix); two levels route d-mod-k")
        if spec.oversubscription:
            raise ValueError("fat-tree: oversubscription applies to a k-ary n-tree (levels, radix); two levels "
                             "taper with uplink_bandwidth")
        return build_two_level(spec, name)
    missing = [key for key in TREE_KEYS if not getattr(spec, key)]
    if missing:
        raise ValueError(f"fat-tree: missing {', '.join(missing)} (each a whole number >= 1)")
    if spec.radix < 2:
        raise ValueError(f"fat-tree: radix = {spec.radix}: a k-ary n-tree needs k >= 2")
    if spec.up_ports == "random" and spec.radix & (spec.radix - 1):
        raise ValueError(f"fat-tree: up_ports = 'random' needs a radix that is a power of two (bits per choice), "
                         f"not {spec.radix}")
    if spec.uplink_bandwidth:
        raise ValueError("fat-tree: uplink_bandwidth applies to two levels; a k-ary n-tree tapers with oversubscription")
    if spec.oversubscription and len(spec.oversubscription) != spec.levels - 1:
        raise ValueError(f"fat-tree: oversubscription lists {len(spec.oversubscription)} numbers for "
                         f"{spec.levels} levels (expected levels - 1 = {spec.levels - 1}, from the leaves up)")
    return build_kary_ntree(spec, name)


# ------------------------------------------------------------------ k-ary n-tree
class KaryNTree:
    """Numbering of a k-ary n-tree (see the module docstring): switch ids, digits, parents."""

    def __init__(self, radix: int, levels: int, npus: int):
        self.k, self.n, self.npus = radix, levels, npus
        self.per_level = radix ** (levels - 1)  # switches per level

    def switch(self, level: int, pos: int) -> int:
        return self.npus + level * self.per_level + pos

    def digit(self, pos: int, index: int) -> int:
        """Digit `index` (0 = most significant) of a switch position's n-1 base-k digits."""
        return pos // self.k ** (self.n - 2 - index) % self.k

    def with_digit(self, pos: int, index: int, value: int) -> int:
        weight = self.k ** (self.n - 2 - index)
        return pos + (value - self.digit(pos, index)) * weight

    def leaf_pos(self, npu: int) -> int:
        return npu // self.k

    def common_levels(self, src: int, dst: int) -> int:
        """Level of the nearest common ancestor of two NPUs: the leading digits their leaves share."""
        pos, target = self.leaf_pos(src), self.leaf_pos(dst)
        common = 0
        while common < self.n - 1 and self.digit(pos, common) == self.digit(target, common):
            common += 1
        return common

    def up_choice_bits(self, src: int, dst: int) -> int:
        """The tie bits a route from `src` to `dst` reads: `choice_width(k)` per up hop."""
        if src == dst:
            return 0
        return (1 << choice_width(self.k) * (self.n - 1 - self.common_levels(src, dst))) - 1



def level_bandwidths(spec: FatTreeSpec) -> list[float]:
    """Bandwidth of the links above each switch level, leaves (level n-1) first, then up."""
    taper = spec.oversubscription or (1.0,) * (spec.levels - 1)
    bandwidths, bandwidth = [], spec.bandwidth
    for ratio in taper:
        bandwidth /= ratio
        bandwidths.append(bandwidth)
    return bandwidths


def nca_route(topo: Topology, src: int, dst: int, ties: int, tree: KaryNTree) -> list[int]:
    """Up to the nearest common ancestor, then down by the destination's digits. Up hop i takes the
    parent of the destination's digit n-1-i, plus (mod k) bits i*log2(k).. of `ties` (0 unless
    `up_ports = "random"`: see the module docstring)."""
    if src == dst:
        return [src]
    k, n = tree.k, tree.n
    bits = choice_width(k)
    pos, target = tree.leaf_pos(src), tree.leaf_pos(dst)
    # the nearest common ancestor is at the deepest level whose switches' leading digits (their
    # first `level` ones, which going up never changes) match the destination leaf's
    common = tree.common_levels(src, dst)
    path = [src, tree.switch(n - 1, pos)]
    for hop, level in enumerate(range(n - 1, common, -1)):  # up: the hop above level l sets digit l-1
        up_port = (dst // k ** hop + (ties >> bits * hop)) % k
        pos = tree.with_digit(pos, level - 1, up_port)
        path.append(tree.switch(level - 1, pos))
    for level in range(common, n - 1):  # down: the hop below level l sets digit l
        pos = tree.with_digit(pos, level, tree.digit(target, level))
        path.append(tree.switch(level + 1, pos))
    path.append(dst)
    return path


def build_kary_ntree(spec: FatTreeSpec, name: str) -> Topology:
    k, n = spec.radix, spec.levels
    npus = k ** n
    tree = KaryNTree(k, n, npus)
    graph = LinkGraph()
    graph.add_nodes_from(range(npus))
    for npu in range(npus):
        add_link_pair(graph, npu, tree.switch(n - 1, tree.leaf_pos(npu)), spec.bandwidth, spec.latency, 0)
    above = level_bandwidths(spec)
    for level in range(n - 1):
        for pos in range(tree.per_level):
            for port in range(k):
                child = tree.with_digit(pos, level, port)
                add_link_pair(graph, tree.switch(level, pos), tree.switch(level + 1, child),
                              above[n - 2 - level], spec.latency, 0)
    # halving the NPUs by their leading digit cuts half of every level's links (k even)
    bisection = (npus // 2) * min([spec.bandwidth, *above])
    dims = [Dimension("switch", npus, spec.bandwidth, spec.latency)]
    choice_bits = tree.up_choice_bits if spec.up_ports == "random" else None
    return Topology(name, "fat-tree", graph, npus, dims, partial(nca_route, tree=tree), bisection, 2 * n,
                    direct_terminals=True, choice_bits=choice_bits, path_bits=tree.up_choice_bits)


# ------------------------------------------------------------------ two levels
def up_down_route(topo: Topology, src: int, dst: int, ties: int, spec: FatTreeSpec) -> list[int]:
    """Up to the nearest common ancestor and down; the spine is chosen by destination (d-mod-k),
    plus `ties` (0 unless a multipath routing draws them: `spine_bits`)."""
    if src == dst:
        return [src]
    leaf_src = topo.npus + src // spec.npus_per_leaf
    leaf_dst = topo.npus + dst // spec.npus_per_leaf
    if leaf_src == leaf_dst:
        return [src, leaf_src, dst]
    spine = topo.npus + spec.leaves + (dst + ties) % spec.spines
    return [src, leaf_src, spine, leaf_dst, dst]


def spine_bits(src: int, dst: int, spec: FatTreeSpec) -> int:
    """The tie bits a two-level route reads: the spine choice, where it crosses the spines."""
    if src // spec.npus_per_leaf == dst // spec.npus_per_leaf:
        return 0
    return (1 << choice_width(spec.spines)) - 1


def build_two_level(spec: FatTreeSpec, name: str) -> Topology:
    npus = spec.leaves * spec.npus_per_leaf
    uplink = spec.uplink_bandwidth or spec.bandwidth
    graph = LinkGraph()
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
    return Topology(name, "fat-tree", graph, npus, dims, partial(up_down_route, spec=spec), bisection, diameter,
                    path_bits=partial(spine_bits, spec=spec))
