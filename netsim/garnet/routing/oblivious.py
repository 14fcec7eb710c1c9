"""Oblivious units of meshes and tori, a path drawn per packet (BookSim's `valiant`, `romm_mesh`
and `xy_yx_mesh`):

- `valiant` (mesh, torus): dimension order to an intermediate node drawn uniformly among all
  NPUs (phase 0), then dimension order to the destination (phase 1). VC classes: on a mesh,
  phase p takes class p of 2; on a torus, class 2*c + p of 4, where c is the dateline class of
  `dor` in that phase (BookSim's VC = 2*class + phase). Deadlock freedom: each phase is
  dimension-order routing, acyclic on a mesh and, with its two dateline classes, on a torus;
  packets only move from phase 0 to phase 1, never back, and phases use disjoint VCs.
- `romm` (mesh): the same two phases, the intermediate node drawn inside the minimal quadrant (a
  coordinate uniform between the source's and the destination's in every dimension): minimal
  routes, classes and argument as `valiant` on a mesh.
- `xy-yx` (mesh): dimension order in increasing dimension order (XY) on class 0 of 2 or in
  decreasing order (YX) on class 1, drawn 50/50 per packet. Deadlock freedom: each order alone
  is acyclic, and a packet keeps its class.

A phase-0 route may pass a router its phase-1 route passes again (going past the intermediate
node and back): the packet's table moves on to the next phase's at the intermediate router.
"""

from __future__ import annotations

from netsim.garnet.routing.base import HIGH, HOPS, NEXT, RoutingUnit, follow
from netsim.garnet.routing.dimension_order import DimensionOrder
from netsim.topology import Topology
from netsim.topology.base import line_steps


class Valiant(RoutingUnit):
    """`valiant`: two dimension-order phases through a random intermediate node (module docstring)."""

    name = "valiant"
    kinds = ("mesh", "torus")
    per_packet = True
    lookup = False  # the table moves on at the intermediate router
    periodic = False

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        super().__init__(topology, seed, dateline)
        self.dor = DimensionOrder(topology, seed, dateline)  # each phase's dateline classes
        self.count = 4 if DimensionOrder.dateline_rings(topology) else 2
        self._tables: dict[tuple, dict] = {}

    def check_vcs(self, vcs_of_dim, dateline: bool) -> None:
        if dateline:
            why = "a class per phase" + (" and dateline class" if self.count == 4 else "")
            self.need_classes(vcs_of_dim, self.count, why)

    def intermediate(self, src: int, dst: int, bits: int) -> int:
        """The intermediate node of a packet from `src` to `dst`, from 64 random `bits`."""
        return bits % self.topology.npus

    def packet_route(self, network, message) -> dict:
        src, dst = message.src, message.dst
        if src == dst:
            return message.route[0]
        bits = self.draw(src, dst)
        mid = self.intermediate(src, dst, bits)
        topo = self.topology
        ties = (bits >> 48 & topo.tie_dims(src, mid), bits >> 56 & topo.tie_dims(mid, dst))
        key = (src, mid, dst, ties)
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = self._phases(network, src, mid, dst, ties)
        return table

    def _phases(self, network, src: int, mid: int, dst: int, ties: tuple[int, int]) -> dict:
        topo = self.topology
        first = network.path_links(topo.route(src, mid, ties[0]))
        second = network.path_links(topo.route(mid, dst, ties[1]))
        before, hops_before = network.path_table(first, self._classes(first, 0), None)
        after, hops_after = network.path_table(second, self._classes(second, 1), dst)
        after[HOPS] = hops_before + hops_after
        before[NEXT] = after
        return before

    def _classes(self, link_ids: list[int], phase: int) -> list[tuple[int, int]]:
        """(class, of how many) of each hop of a phase (see the module docstring)."""
        if self.count == 2:
            return [(phase, 2)] * len(link_ids)
        return [(2 * (vc_class == HIGH) + phase, 4) for vc_class in self.dor.hop_classes(link_ids)]

    @staticmethod
    def output(router, packet) -> tuple:
        """Route computation: the entry of the packet's current phase (moving on at the intermediate)."""
        return follow(packet, router.node)


class ROMM(Valiant):
    """`romm`: two phases through an intermediate node of the minimal quadrant (module docstring)."""

    name = "romm"
    kinds = ("mesh",)

    def intermediate(self, src: int, dst: int, bits: int) -> int:
        topo = self.topology
        coords = []
        for d, (a, b) in enumerate(zip(topo.coords(src), topo.coords(dst))):
            low, high = min(a, b), max(a, b)
            coords.append(low + (bits >> 8 * d & 0xFF) % (high - low + 1))
        return topo.npu_at(coords)


class XYYX(RoutingUnit):
    """`xy-yx`: dimension order up (class 0) or down (class 1), 50/50 per packet (module docstring)."""

    name = "xy-yx"
    kinds = ("mesh",)
    per_packet = True
    periodic = False

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        super().__init__(topology, seed, dateline)
        self._tables: dict[tuple, dict] = {}

    def check_vcs(self, vcs_of_dim, dateline: bool) -> None:
        if dateline:
            self.need_classes(vcs_of_dim, 2, "one class per dimension order")

    def packet_route(self, network, message) -> dict:
        src, dst = message.src, message.dst
        if src == dst:
            return message.route[0]
        down = self.draw(src, dst) & 1
        table = self._tables.get((src, dst, down))
        if table is None:
            order = range(len(self.topology.dims))
            links = network.path_links(self.ordered_path(src, dst, reversed(order) if down else order))
            table, hops = network.path_table(links, [(down, 2)] * len(links), dst)
            table[HOPS] = hops
            self._tables[src, dst, down] = table
        return table

    def ordered_path(self, src: int, dst: int, order) -> list[int]:
        """The mesh path from `src` to `dst` correcting the dimensions in `order`."""
        topo = self.topology
        here, there = list(topo.coords(src)), topo.coords(dst)
        path = [src]
        for d in order:
            for step in line_steps(here[d], there[d]) if here[d] != there[d] else ():
                here[d] = step
                path.append(topo.npu_at(here))
        return path
