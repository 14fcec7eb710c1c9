"""Route tables of a packet network's messages (GarnetNetwork.route): per (tie bits, source,
destination), the table router id -> (output unit, lowest VC, VC bound) that route computation
reads, with the route's router-to-router hops, its NIC cycles, its injection port and the
dimensions it crosses; built once, on first use. Part of the compiled core: synthetic traffic
builds a route for every pair it sends between (65,536 on a 16x16 torus) and looks one up per
packet.

Building one is mostly lookups: per link id, the route entry of a hop over it by VC class; NIC
cycles per set of dimensions crossed; and, for routes that correct one dimension after another
(`RoutingUnit.classes_per_dimension`, `Topology.waypoint`), the tables of the two legs they join.
"""

from __future__ import annotations

from typing import Any

from netsim.garnet.routing.base import ANY, HIGH, LOW, class_range, vc_range


class RouteTables:
    """The routes of one network's messages (see the module docstring)."""

    __slots__ = ("topology", "routing", "params", "npus", "tables", "join_legs", "link_units", "between_routers",
                 "hop_entries", "link_dims", "injector_of", "eject_of", "nic_of", "class_entries", "nic_cycles")

    def __init__(self, topology, routing, params, link_units: list, between_routers: list, injector_of: dict,
                 eject_of: dict, nic_of: dict):
        self.topology = topology
        self.routing = routing
        self.params = params
        self.npus = topology.npus
        self.tables: dict[int, tuple] = {}  # route() by an int key (hashes fastest)
        # routes that correct one dimension after another are joined from their legs (`_joined`)
        self.join_legs = routing.classes_per_dimension
        self.link_units = link_units  # per topology link: the output unit that drives it
        self.between_routers = between_routers  # per topology link: router to router (not a NIC's)
        # per link id: the route entry of a hop over it by VC class (LOW, HIGH, ANY = -1: the last)
        self.hop_entries = [[(out, *vc_range(vc_class, len(out.credits))) for vc_class in (LOW, HIGH, ANY)]
                            if inner else None for out, inner in zip(link_units, between_routers)]
        self.link_dims = [link.dim for link in topology.links]
        self.injector_of = injector_of  # first link of a route -> its injection port
        self.eject_of = eject_of  # last link of a route -> its ejection port
        self.nic_of = nic_of  # NPU -> (injector, ejection unit), for a route to itself
        self.class_entries: dict[tuple[int, int, int], tuple] = {}  # hop_entry()
        self.nic_cycles: dict[frozenset, int] = {}  # dimensions crossed -> NIC cycles

    def route(self, src: int, dst: int, ties: int) -> tuple:
        """(router id -> (output unit, VC lo, VC hi), router-to-router hops, NIC cycles, injection
        port, dimensions crossed) of src -> dst with tie bits `ties` (`Topology.route`), built once."""
        key = (ties * self.npus + src) * self.npus + dst
        entry = self.tables.get(key)
        if entry is None:
            entry = self.tables[key] = self._build(src, dst, ties)
        return entry

    def _build(self, src: int, dst: int, ties: int) -> tuple:
        topo = self.topology
        if src == dst:  # through its own router and back (synthetic traffic; NIC ports of its own)
            injector, eject = self.nic_of[src]
            return {eject.owner.node: (eject, 0, len(eject.credits))}, 0, 0, injector, frozenset()
        if self.join_legs:
            waypoint = topo.waypoint(src, dst)
            if waypoint is not None:
                via, dim = waypoint
                return self._joined(src, dst, ties, via, dim)
        path = topo.route(src, dst, ties)
        link_ids = topo.link_ids(path)
        injector = self.injector_of[link_ids[0]]
        eject = self.eject_of[link_ids[len(link_ids) - 1]]  # (no negative index: see setup.py)
        classes = self.routing.hop_classes(link_ids)
        table = {}
        inner = 0  # router-to-router hops
        for k in range(len(link_ids)):
            entries = self.hop_entries[link_ids[k]]
            if entries is not None:
                table[path[k]] = entries[classes[k]]
                inner += 1
        table[eject.owner.node] = (eject, 0, len(eject.credits))
        dims = frozenset([self.link_dims[link_id] for link_id in link_ids])
        return table, inner, self._nic_cycles_of(dims), injector, dims

    def _joined(self, src: int, dst: int, ties: int, via: int, dim: int) -> tuple:
        """The route src -> dst as its leg src -> via in dimension `dim` joined to via -> dst
        (`Topology.waypoint`): the same table as built hop by hop, since each hop's VC class depends
        on its own dimension only (`classes_per_dimension`), from two routes built once for every
        pair whose route has them (a 16x16 torus's 65,536 pairs share 8,192 legs)."""
        below = (2 << dim) - 1  # the tie bits of dimensions up to `dim`
        first = self.route(src, via, ties & below)
        rest = self.route(via, dst, ties & ~below)
        table = dict(first[0])
        table.update(rest[0])  # via's entry: its hop on, not the first leg's ejection
        dims = first[4] | rest[4]
        return table, first[1] + rest[1], self._nic_cycles_of(dims), first[3], dims

    def _nic_cycles_of(self, dims: frozenset) -> int:
        """The NIC cycles of a route crossing dimensions `dims` (`Params.nic_cycles`), once per set."""
        nic_cycles = self.nic_cycles.get(dims)
        if nic_cycles is None:
            nic_cycles = self.nic_cycles[dims] = self.params.nic_cycles(dims)
        return nic_cycles

    def hop_entry(self, link_id: int, index: int, count: int) -> tuple:
        """The route entry of a hop over router-to-router link `link_id` in VC class `index` of `count`."""
        key = (link_id, index, count)
        entry = self.class_entries.get(key)
        if entry is None:
            out = self.link_units[link_id]
            entry = self.class_entries[key] = (out, *class_range(index, count, len(out.credits)))
        return entry

    def path_table(self, link_ids: list, classes, dst: Any) -> tuple:
        """(route table, router-to-router hops) of a route, or of one phase of it, over `link_ids`,
        hop i in VC class `classes[i]` ((index, count), one per link; those of NIC links unused);
        with `dst`, ending at that NPU's NIC (routing units that build a packet's own route)."""
        table = {}
        hops = 0
        for link_id, (index, count) in zip(link_ids, classes):
            if self.between_routers[link_id]:
                table[self.link_units[link_id].owner.node] = self.hop_entry(link_id, index, count)
                hops += 1
        if dst is not None:
            eject = self.eject_of[link_ids[len(link_ids) - 1]] if link_ids else self.nic_of[dst][1]
            table[eject.owner.node] = (eject, 0, len(eject.credits))
        return table, hops
