"""`adaptive` on meshes and tori: minimal adaptive routing over escape VCs (Duato), as BookSim's
`min_adapt_mesh` and `min_adapt_torus` route.

Route computation offers a head a set of routes (`choices`), of which the router's VC allocation
takes whichever gets a downstream VC, at each attempt anew (allocators/base.py):
- the escape route: the dimension-order output (XY; on a torus the minimal direction of the
  first unfinished ring, an antipode tie drawn at random at each route computation) on the escape
  VCs;
- unless the packet arrived on an escape VC: an adaptive route on the adaptive VCs, along the
  first unfinished dimension in its minimal direction (on a torus the - direction at the
  antipode). BookSim's functions offer every unfinished dimension's, all at one priority, but its
  route set (a `std::set` ordered by priority alone) keeps only the first of equal priority: in
  BookSim, and here, the adaptive route runs along the escape route's dimension (the same output
  on a mesh; on a torus the other direction at an antipode tie).
A packet on an escape VC keeps to the escape VCs to its destination; one injected, or on an
adaptive VC, is offered both at every router. At its destination router it ejects on any VC.

VC classes (BookSim's):
- mesh: escape VC 0; adaptive VCs 1 .. vcs-1 (`garnet.vcs >= 2`);
- torus: escape VCs 0 and 1, the dateline classes of `dor-booksim` (VC 1 when the destination's
  coordinate in the ring is below the current one, chosen on entering the ring and kept along it;
  a packet entering the escape VCs enters its ring there); adaptive VC 3 alone, VC 2 and those
  above 3 idle between routers (BookSim hard-codes VC 3; `garnet.vcs >= 4`).
Deadlock freedom (Duato): the escape VCs alone carry dimension-order routes, acyclic on a mesh and,
with their dateline classes, on a torus; a packet anywhere may take them (its escape route is
among its options at every router) and, once on them, stays on them to its destination, which
they reach. So every packet waits, at worst, for escape VCs whose dependencies have no cycle.
"""

from __future__ import annotations

from netsim.garnet.routing.base import RoutingUnit
from netsim.topology import Topology

ESCAPE_KINDS = ("mesh", "torus")
TORUS_ADAPTIVE_VC = 3  # BookSim's min_adapt_torus: the only adaptive VC


class EscapeAdaptive(RoutingUnit):
    """`adaptive` on a mesh or torus: minimal adaptive outputs beside an escape route (module docstring)."""

    name = "adaptive"
    kinds = ESCAPE_KINDS
    per_packet = True  # (only to meet the network: a packet follows no table of its own)
    lookup = False
    choices = True

    def __init__(self, topology: Topology, seed: int, dateline: bool = True):
        super().__init__(topology, seed, dateline)
        self.torus = topology.kind == "torus"
        self.periodic = not self.torus  # a torus's antipode ties are random draws, not network state
        self.sizes = [dim.size for dim in topology.dims]
        self.along = [(link.dim, self._step(link.src, link.dst, link.dim)) for link in topology.links]  # per link
        self.network = None
        self._options: dict[tuple, tuple] = {}  # (router, destination, arrival state, tie) -> route entries

    def check_vcs(self, vcs_of_dim, dateline: bool) -> None:
        if self.torus:
            self.need_classes(vcs_of_dim, TORUS_ADAPTIVE_VC + 1, "escape VCs 0 and 1, BookSim's adaptive VC 3")
        else:
            self.need_classes(vcs_of_dim, 2, "the escape VC 0 and adaptive VCs")

    def packet_route(self, network, message) -> dict:
        """The message's own (dimension-order) table: its ejection entry and hop count."""
        self.network = network
        return message.route[0]

    def options(self, router, vc) -> tuple:
        packet = vc.front
        node, dst = router.node, packet.msg.dst
        if node == dst:
            return (packet.route[node],)
        link_id = vc.port.link_id
        escaped = link_id >= 0 and vc.index <= int(self.torus) and self.network.between_routers[link_id]
        state = (vc.index, *self.along[link_id]) if escaped else None  # its VC (class) and the way it came
        tie = self._tie(packet, node, dst, state)
        key = (node, dst, state, tie)
        found = self._options.get(key)
        if found is None:
            found = self._options[key] = self._build(node, dst, state, tie)
        return found

    def _tie(self, packet, node: int, dst: int, state) -> int:
        """A torus's escape route entering a ring at its antipode: which way (1: +), drawn afresh
        at each route computation as BookSim does; 0 where there is no such tie."""
        if not self.torus:
            return 0
        here, there = self.topology.coords(node), self.topology.coords(dst)
        d = next(d for d, (a, b) in enumerate(zip(here, there)) if a != b)
        if (state is not None and state[1] == d) or 2 * ((there[d] - here[d]) % self.sizes[d]) != self.sizes[d]:
            return 0
        return self.draw(packet.msg.src, dst) & 1

    def _build(self, node: int, dst: int, state, tie: int) -> tuple:
        """The route entries at `node` towards `dst` of a packet that arrived in `state` (None: not
        on an escape VC): the adaptive route first, the escape route last."""
        topo, sizes = self.topology, self.sizes
        here, there = topo.coords(node), topo.coords(dst)
        d = next(d for d, (a, b) in enumerate(zip(here, there)) if a != b)  # the first unfinished dimension
        entries = []
        if state is None:  # the adaptive route BookSim's route set keeps: along d (module docstring)
            out = self._unit(node, here, d, self._minimal(here[d], there[d], sizes[d], -1))
            adaptive = (TORUS_ADAPTIVE_VC, TORUS_ADAPTIVE_VC + 1) if self.torus else (1, len(out.credits))
            entries.append((out, *adaptive))
        if state is not None and state[1] == d:  # along the ring it arrived on: same direction, same class
            vc_class, step = state[0], state[2]
        else:
            step = self._minimal(here[d], there[d], sizes[d], 1 if tie else -1)
            vc_class = int(here[d] > there[d]) if self.torus else 0
        entries.append((self._unit(node, here, d, step), vc_class, vc_class + 1))
        return tuple(entries)

    def _minimal(self, a: int, b: int, size: int, tie: int) -> int:
        """The step (+1 or -1) of a minimal move from coordinate `a` to `b` (on a torus's ring of
        `size`, `tie` at the antipode)."""
        if not self.torus:
            return 1 if b > a else -1
        twice = size - 2 * ((b - a) % size)  # BookSim's dist2: > 0 when + is shorter
        return 1 if twice > 0 else -1 if twice < 0 else tie

    def _step(self, u: int, v: int, dim: int) -> int:
        """The step (+1 or -1) along dimension `dim` of a link from `u` to `v`."""
        a, b = self.topology.coords(u)[dim], self.topology.coords(v)[dim]
        return 1 if (b - a) % self.sizes[dim] == 1 else -1

    def _unit(self, node: int, here: tuple, dim: int, step: int):
        """The output unit of `node` towards its neighbour one `step` along `dim`."""
        there = list(here)
        there[dim] = (here[dim] + step) % self.sizes[dim]
        return self.network.link_units[self.topology.link(node, self.topology.npu_at(there)).id]
