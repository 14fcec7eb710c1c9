"""One period of a torus: a symmetric run whose traffic repeats every m NPUs along each ring, simulated
on the torus of m NPUs per ring (the quotient), its state read back onto every copy of it.

system.symmetric sends a representative's message as copies on every pair of an orbit, all in one
cycle (mirrored.py). On a torus the orbit of a ring algorithm's message is every NPU sending to its
neighbour: the same pairs after moving every NPU m places along a ring. When every message the
network carries is such a copy and every orbit repeats every m_d NPUs along dimension d, each
router, port, VC and link of the torus does, cycle by cycle, what its image in the quotient does
(the unit at coordinates taken modulo m_d), so each copy arrives when its image does and each
counter is its image's. That follows by induction over cycles when these hold, checked for every
orbit before its first copy is sent (`Quotient.admit`; the traffic so far repeats, so an orbit may
join at any time):

- each unit (router input and output units, NIC ports) has its image's depth, VCs, link latency and
  cycles per flit, and sits in the image of its router (`Quotient.__init__`);
- each pair's route, moved into the quotient, is its image's route (dimension order then takes the
  same directions: a peer k places away needs m_d > 2k);
- ports a router arbitrates between (the inputs that feed one output, the outputs one input feeds)
  are in the order of their images in the image router: an arbiter's turns follow port order (the
  wrap-around routers list their ports in another order than the others);
- every link carries one VC class in the torus and its image one in the quotient. The dateline's
  classes are the lower and upper half of a port's VCs and the wrap links lie elsewhere in the
  quotient, so a link's class may be the other half of its image's; the allocators take a class's
  VCs in turn from its first (`OutputUnit.select_vc`, BookSim's iSLIP ranks by port first), so its
  VCs then do what the image's other half does, and its VC statistics are read with the halves
  swapped.

Tests compare every statistic with the copies run (`garnet.symmetry = "copies"`) on rings and tori,
under both router models and fidelities. A run folds at its first symmetric collective when nothing
was sent before it; traffic that cannot fold after that (a message that is not a copy, an orbit that
breaks a rule above) raises QuotientConflict, and the runner simulates the run again with every copy
sent (netsim.app.runner). Deadlock and invariant errors name the quotient's routers.
"""

from __future__ import annotations

from netsim.errors import QuotientConflict
from netsim.garnet.routing.base import ANY
from netsim.topology.base import coords_of, dim_stride, npu_of
from netsim.topology.hierarchical import LevelSpec, build_levels


def fold(network, orbits: list) -> Quotient | None:
    """The quotient that runs `orbits` (a fresh torus network's first traffic) and every copy after
    them, or None where they do not repeat along any ring (or break a rule of the module docstring)."""
    topology = network.topology
    if topology.kind != "torus":
        return None
    sizes = topology.dim_sizes
    folded = tuple(_period(orbits, sizes, d) for d in range(len(sizes)))
    if folded == sizes:
        return None
    try:
        quotient = Quotient(network, folded)
        quotient.check_units()
        quotient.admit(orbits)
    except QuotientConflict:
        return None
    return quotient


def _period(orbits: list, sizes: tuple, d: int) -> int:
    """The fewest NPUs along dimension `d` (at least 3) after which every orbit repeats, more than twice
    as many as its pairs' farthest offset along `d` (so routes keep their direction); `sizes[d]` if none."""
    size, stride = sizes[d], dim_stride(sizes, d)
    reach = 0
    for orbit in orbits:
        for src, dst in orbit.pairs:
            offset = (dst // stride - src // stride) % size
            reach = max(reach, min(offset, size - offset))
    for m in range(max(3, 2 * reach + 1), size):
        if size % m == 0 and all(_repeats(orbit.pairs, sizes, d, m) for orbit in orbits):
            return m
    return size


def _repeats(pairs: list, sizes: tuple, d: int, m: int) -> bool:
    """Whether `pairs` are the same pairs after moving every NPU `m` places along dimension `d`."""
    size, stride = sizes[d], dim_stride(sizes, d)

    def moved(npu: int) -> int:
        return npu + m * stride if (npu // stride) % size + m < size else npu + (m - size) * stride

    known = set(pairs)
    return all((moved(src), moved(dst)) in known for src, dst in pairs)


class Quotient:
    """The quotient network that runs a torus network's traffic, the images of the torus's NPUs, links
    and units in it, and the torus's statistics read off the images (what `GarnetNetwork.observed`
    gives the statistics tables)."""

    def __init__(self, network, sizes: tuple):
        topology = network.topology
        nic = topology.nic_latency
        levels = [LevelSpec(dim.kind, size, dim.bandwidth, dim.latency, nic[d] if nic else 0.0)
                  for d, (dim, size) in enumerate(zip(topology.dims, sizes))]
        self.full = network
        self.sizes = sizes
        self.network = inner = network.sibling(build_levels(f"{topology.name} folded", "torus", levels))
        self.copies = topology.npus // inner.topology.npus  # units of the torus per unit of the quotient
        self.image = [npu_of(coords_of(npu, topology.dim_sizes), sizes) for npu in range(topology.npus)]
        self.link_image = [inner.topology.link(self.image[link.src], self.image[link.dst]).id
                           for link in topology.links]
        self.link_units = [inner.link_units[i] for i in self.link_image]  # per torus link: its image's unit
        nic_ports = {(npu, kind, link): unit for npu, kind, link, unit in inner.nic_ports}
        self.nic_ports = [(npu, kind, link, nic_ports.get((self.image[npu], kind, self.link_image[link] if link >= 0
                                                           else -1)))
                          for npu, kind, link, _unit in network.nic_ports]  # per torus NIC port: its image
        if any(unit is None for *_port, unit in self.nic_ports):
            raise QuotientConflict("a NIC port has no image in the folded torus")
        self.unit_image: dict = {}  # torus unit -> its image (input and output units, by identity)
        for full_out, out in zip(network.link_units, self.link_units):
            self.unit_image[full_out] = out
            if full_out.dst_port is not None and out.dst_port is not None:
                self.unit_image[full_out.dst_port] = out.dst_port
        for (_npu, kind, _link, full_out), (_n, _k, _l, out) in zip(network.nic_ports, self.nic_ports):
            self.unit_image[full_out] = out
            if kind == "nic-npu":
                self.unit_image[full_out.dst_port] = out.dst_port
        self.link_class: dict = {}  # torus link id -> the VC class its hops take
        self.image_class: dict = {}  # quotient link id -> the same
        self.feeds: dict = {}  # torus unit -> the units it meets in its router's arbiters (inputs: outputs, outputs: inputs)
        self.orbits: dict = {}  # admitted torus orbit -> its orbit in the quotient
        self._image_routes: dict = {}  # (src, dst) in the quotient -> its route_ports

    def check_units(self) -> None:
        """Every unit of every torus router has its image in the image router, with its image's shape."""
        inner = self.network
        for router in self.full.routers:
            image = inner.router_at[self.image[router.node]]
            if router.pipeline != image.pipeline:
                raise QuotientConflict(f"router {router.node}'s pipeline differs from its image's")
            if len(router.inputs) != len(image.inputs) or len(router.outputs) != len(image.outputs):
                raise QuotientConflict(f"router {router.node} has other ports than its image")
            for units in (router.inputs, router.outputs):
                for unit in units:
                    other = self.unit_image.get(unit)
                    if other is None or _router_of(other) is not image or _shape(unit) != _shape(other):
                        raise QuotientConflict(f"router {router.node}'s port {unit.name} differs from its image's")
        for (_npu, _kind, _link, unit), (_n, _k, _l, other) in zip(self.full.nic_ports, self.nic_ports):
            if _shape(unit) != _shape(other):
                raise QuotientConflict(f"NIC port {unit.name} differs from its image's")

    def admit(self, orbits: list) -> None:
        """Check `orbits` against the module docstring's rules (with those admitted before) and map each to
        its orbit in the quotient; QuotientConflict where one breaks a rule."""
        full, inner, image = self.full, self.network, self.image
        sizes = full.topology.dim_sizes
        for d, m in enumerate(self.sizes):
            if m < sizes[d] and not all(_repeats(orbit.pairs, sizes, d, m) for orbit in orbits):
                raise QuotientConflict(f"a symmetric message does not repeat every {m} NPUs along dimension {d}")
        for orbit in orbits:
            if orbit in self.orbits:
                continue
            folded = inner.uniform_orbit(sorted({(image[src], image[dst]) for src, dst in orbit.pairs}))
            if folded is None or folded.routes[0][1:3] != orbit.routes[0][1:3]:
                raise QuotientConflict("a symmetric message's route differs in the folded torus")
            for src, dst in orbit.pairs:
                self._admit_route(src, dst)
            self.orbits[orbit] = folded
        for unit, met in self.feeds.items():
            if len(met) > 1:
                order = sorted(met, key=lambda other: other.index)
                if [self.unit_image[other].index for other in order] != sorted(self.unit_image[other].index
                                                                             for other in order):
                    raise QuotientConflict(f"ports meeting at {unit.name} lie in another order in the folded torus")

    def _admit_route(self, src: int, dst: int) -> None:
        """Pair src -> dst: its route maps onto its image's, one VC class per link, and the ports it joins."""
        full, inner = self.full, self.network
        if src == dst:
            raise QuotientConflict(f"a symmetric message from NPU {src} to itself")
        links, classes, joins = full.route_ports(src, dst)
        pair = (self.image[src], self.image[dst])
        image_route = self._image_routes.get(pair)
        if image_route is None:
            image_route = self._image_routes[pair] = inner.route_ports(*pair)
        image_links, image_classes, _joins = image_route
        if [self.link_image[link] for link in links] != image_links:
            raise QuotientConflict(f"the route {src} -> {dst} differs in the folded torus")
        for link, image_link, vc_class, image_class in zip(links, image_links, classes, image_classes):
            if (self.link_class.setdefault(link, vc_class) != vc_class
                    or self.image_class.setdefault(image_link, image_class) != image_class):
                raise QuotientConflict(f"link {link} carries two VC classes")
            if vc_class != image_class and (ANY in (vc_class, image_class)
                                            or len(full.link_units[link].credits) % 2):
                raise QuotientConflict(f"link {link}'s VC class is not its image's half")
        for port, out in joins:
            self.feeds.setdefault(port, set()).add(out)
            self.feeds.setdefault(out, set()).add(port)

    def send(self, src: int, dst: int, nbytes: int, orbit, arrived, receiver: int) -> None:
        """Send the image of the representative's message src -> dst on the image of `orbit` (admitted
        first if it was not: QuotientConflict if it breaks a rule)."""
        folded = self.orbits.get(orbit)
        if folded is None:  # an orbit planned after the fold (every copy sent so far repeats: it may join)
            self.admit([orbit])
            folded = self.orbits[orbit]
        image = self.image
        self.network.send_mirrored(image[src], image[dst], nbytes, folded, arrived, image[receiver])

    # ------------------------------------------------------------------ what statistics read
    @property
    def clock(self):
        return self.network.clock

    @property
    def packet_stats(self):
        """The packets of every copy: the quotient's, as many times over as it has copies in the torus."""
        return self.network.packet_stats.times(self.copies)

    def vc_ports(self) -> list[tuple]:
        """(router, input unit, its VCs) of every torus input port, the VCs its image's (halves swapped
        where the link's VC class is the other half of its image's)."""
        rows = []
        for router in self.full.routers:
            for port in router.inputs:
                vcs = list(self.unit_image[port].vcs)
                link = port.link_id
                if link >= 0 and self.link_class.get(link, ANY) != self.image_class.get(self.link_image[link], ANY):
                    half = len(vcs) // 2
                    vcs = vcs[half:] + vcs[:half]
                rows.append((router.node, port, vcs))
        return rows


def _router_of(unit):
    """The router an input unit (`router`) or output unit (`owner`) belongs to."""
    return unit.router if hasattr(unit, "vcs") else unit.owner


def _shape(unit) -> tuple:
    """What a unit's behaviour depends on besides its state: buffer depth and VCs, link timing."""
    if hasattr(unit, "vcs"):  # an input unit
        return "input", unit.depth, len(unit.vcs)
    return "output", unit.depth, len(unit.credits), unit.cpf, unit.latency, unit.ejects
