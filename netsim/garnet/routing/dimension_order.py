"""Dimension-order units: `dor`, `dor-booksim` and `dragonfly-min`, one fixed route per message.

`Topology.route()` gives the minimal path of every topology kind (dimension order on tori, meshes
and hierarchical graphs, through the switch, up/down on fat-trees). On an even ring the antipode
is as near either way: the tie is broken per message by the network's rule (`Topology.tie_breaker`:
at random from the seed by default; for synthetic traffic a message is one packet, as BookSim
breaks it per packet), so a message's packets stay in order on one path, as ECMP does per flow.

Rings need a dateline to be deadlock-free: the VCs of a ring port split into class 0 (the lower
half) and class 1 (the upper half), and a packet moves from class 0 to class 1 as it crosses the
ring's wrap-around link (between coordinates size-1 and 0):
- `dor`: in class 0 until it takes the wrap link, class 1 from that link on (the classic rule);
- `dor-booksim`: BookSim's `dim_order_torus` rule: the class is chosen on entering the dimension,
  1 if the path in it crosses the wrap link, and kept for the whole dimension.
Every other hop (mesh, switch, fully-connected, fat-tree, and the NIC's ejection) may take any VC:
dimension-ordered lines, up/down routes and one-hop dimensions have no cyclic channel dependency.

Route computation (`output`) reads the table built for the message, so a router need not know the
rule.
"""

from __future__ import annotations

from netsim.errors import ConfigError
from netsim.garnet.routing.base import ANY, HIGH, LOW, RoutingUnit, global_links
from netsim.topology import Topology


class DimensionOrder(RoutingUnit):
    """`dor`: dimension-order routes, dateline classes switching at the wrap-around link."""

    name = "dor"
    classes_per_dimension = True  # the dateline class is chosen anew in each ring dimension

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        super().__init__(topology, seed, dateline)
        self.rings = self._ring_links(topology, dateline)

    @staticmethod
    def dateline_rings(topology: Topology) -> set[int]:
        """Dimensions whose links form rings with a wrap-around (size > 2)."""
        return {d for d, dim in enumerate(topology.dims) if dim.kind == "ring" and dim.size > 2}

    def check_vcs(self, vcs_of_dim, dateline: bool) -> None:
        """A ring dimension with a dateline needs >= 2 VCs per port; say so clearly."""
        if not dateline:
            return
        for d in sorted(self.dateline_rings(self.topology)):
            if vcs_of_dim(d) < 2:
                raise ConfigError(f"garnet.vcs = {vcs_of_dim(d)}: dimension {d} is a ring of "
                                  f"{self.topology.dims[d].size}, which needs >= 2 VCs per port for "
                                  "deadlock-free dateline routing (set garnet.vcs = 2 or more)")

    def _ring_links(self, topology: Topology, dateline: bool) -> list[tuple[int, bool]]:
        """Per link id: (the dateline ring dimension the link runs along, or -1; whether it is the
        ring's wrap-around link). Computed once, so that building a route needs no coordinates."""
        rings = self.dateline_rings(topology) if dateline else set()
        info = []
        for link in topology.links:
            u, v, dim = link.src, link.dst, link.dim
            if dim not in rings or topology.is_switch(u) or topology.is_switch(v):
                info.append((-1, False))
                continue
            size = topology.dims[dim].size
            info.append((dim, {topology.coords(u)[dim], topology.coords(v)[dim]} == {0, size - 1}))
        return info

    def hop_classes(self, link_ids) -> list[int]:
        """The VC class (ANY, LOW or HIGH) of each hop of a route given by its link ids."""
        classes = []
        current_dim, crossed = -1, False
        for link_id in link_ids:
            dim, wrap = self.rings[link_id]
            if dim < 0:
                classes.append(ANY)
                continue
            if dim != current_dim:
                current_dim, crossed = dim, False
            if wrap:
                crossed = True
            classes.append(HIGH if crossed else LOW)
        return classes


class BookSimDateline(DimensionOrder):
    """`dor-booksim`: dimension-order routes, a ring's class chosen on entering it (BookSim)."""

    name = "dor-booksim"

    def hop_classes(self, link_ids) -> list[int]:
        hops = [self.rings[link_id] for link_id in link_ids]  # (ring dimension or -1, wrap-around?)
        classes = []
        i, n = 0, len(hops)
        while i < n:
            dim = hops[i][0]
            if dim < 0:
                classes.append(ANY)
                i += 1
                continue
            j, crosses = i, False  # the hops in this ring: one class, HIGH if any of them wraps
            while j < n and hops[j][0] == dim:
                crosses = crosses or hops[j][1]
                j += 1
            classes.extend([HIGH if crosses else LOW] * (j - i))
            i = j
        return classes


class DragonflyMinimal(DimensionOrder):
    """`dragonfly-min`: a dragonfly's minimal routes (local, global, local; BookSim's `min`), the VC
    class switching at the global link: LOW (the lower half of a port's VCs) before the global hop,
    HIGH on it and after it.

    Deadlock freedom: a route takes at most one local hop in LOW, then its global hop and at most
    one local hop in HIGH, then ejects. Every channel dependency therefore goes LOW-local ->
    HIGH-global -> HIGH-local -> ejection, never back to a lower rank, so the channel-dependency
    graph is acyclic (BookSim's `min` uses VC 0 and VC 1 the same way).
    """

    name = "dragonfly-min"
    kinds = ("dragonfly",)
    classes_per_dimension = False  # HIGH from the global link on, whatever the dimension

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        super().__init__(topology, seed, dateline)
        self.phases = dateline  # False: the test-only switch that lets every hop use any VC
        self.global_links = global_links(topology)

    def check_vcs(self, vcs_of_dim, dateline: bool) -> None:
        """The two classes need >= 2 VCs per router port; say so clearly."""
        dims = {link.dim for link, is_global in zip(self.topology.links, self.global_links) if is_global}
        for d in sorted(dims if dateline else ()):
            if vcs_of_dim(d) < 2:
                raise ConfigError(f"garnet.vcs = {vcs_of_dim(d)}: dragonfly-min routing needs >= 2 VCs per port "
                                  "(one class before the global link, one from it on); set garnet.vcs = 2 or more")

    def hop_classes(self, link_ids) -> list[int]:
        if not self.phases:
            return [ANY] * len(link_ids)
        classes, crossed = [], False
        for link_id in link_ids:
            crossed = crossed or self.global_links[link_id]
            classes.append(HIGH if crossed else LOW)
        return classes

