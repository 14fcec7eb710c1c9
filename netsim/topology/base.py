"""The one `Topology` type every backend and the system layer share.

A topology is a directed graph (a builder's `LinkGraph`; `Topology.graph` gives it as a networkx
DiGraph). Nodes 0..npus-1 are NPUs (in a direct network each NPU is also its own router); nodes
npus.. are switches. Every directed edge is a link with `bandwidth` (GB/s = bytes/ns), `latency`
(ns), `dim` (the logical dimension it serves, or -1) and an integer `id`. The dimension
structure (which NPUs are peers along each dimension) is what the system layer builds its
collectives on; `route()` gives the minimal path a message takes, which the analytical backend
costs and the packet backend follows.

On an even ring the antipode is as near one way round as the other. Such a tie is broken per
message: `tie_dims()` says in which dimensions a route has one, `route(..., ties)` takes the
negative way in the dimensions whose bit is set, and every backend draws the bits from a
`RouteTies` of the network's rule (`route_ties`): at random from its seed, so + and - links carry
equal shares of, say, uniform or all-to-all traffic, or always the positive way (ASTRA-sim's rule,
set for its network files). A builder may use the same bits for other choices among equal paths
(a fat-tree's up ports: `choice_bits`). The random bits of the k-th message from one NPU to another are a hash
of (seed, source, destination, k): they do not depend on the order in which a simulator happens to
handle events of one instant (so an optimisation that reorders them cannot change a route).

Multipath fabrics (fat-trees, rail clusters) have several equal minimal paths per pair even where
their default route takes one (d-mod-k): the builder names the bits of `ties` that choose among
them (`path_bits`), and `paths()` lists every distinct path they give. ECMP draws one of those per
message by the same hash (`tie_breaker(seed, multipath=True)`), on every backend alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, reduce
from typing import TYPE_CHECKING, Callable, Sequence

from netsim.topology.graph import LinkGraph

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class Dimension:
    """One logical dimension: its kind (ring, fully-connected, switch), size and link figures."""

    kind: str
    size: int
    bandwidth: float  # GB/s per link
    latency: float  # ns per link


@dataclass(frozen=True)
class Link:
    """A directed link; `id` is its row in per-link reports."""

    id: int
    src: int
    dst: int
    bandwidth: float
    latency: float
    dim: int
    kind: str


class Topology:
    """NPUs, switches, directed links, the dimension structure and the routing function."""

    def __init__(self, name: str, kind: str, graph: LinkGraph, npus: int, dims: Sequence[Dimension],
                 router: Callable[["Topology", int, int], list[int]], bisection_bandwidth: float, diameter: int,
                 switch_latency: dict[int, float] | None = None, nic_latency: Sequence[float] = (),
                 direct_terminals: bool = False, choice_bits: Callable[[int, int], int] | None = None,
                 path_bits: Callable[[int, int], int] | None = None,
                 waypoint: Callable[["Topology", int, int], tuple[int, int] | None] | None = None):
        self.name = name
        self.kind = kind
        self._built = graph  # as the builder made it (`graph` is it as a networkx DiGraph)
        self.npus = npus
        self.dims = tuple(dims)
        self.dim_sizes = tuple(d.size for d in self.dims)
        self._router = router
        self.bisection_bandwidth = bisection_bandwidth
        self.diameter_hops = diameter  # closed form from the builder; routing all pairs is O(N^2)
        self.switch_latency = dict(switch_latency or {})
        self.nic_latency = tuple(nic_latency) or tuple(0.0 for _ in self.dims)
        # NPUs attach to their first switch directly, without a router of their own (a single
        # k-port router with its terminals, as BookSim's); else every NPU is also a router.
        self.direct_terminals = direct_terminals
        self.route_ties = "random"  # the rule a RouteTies of this topology follows (`tie_rule`)
        # a builder whose routes choose among equal paths otherwise than at ring antipodes says which
        # bits of `ties` a pair's route reads (`tie_dims`)
        self._choice_bits = choice_bits
        # the bits of `ties` that choose among a pair's equal minimal paths, drawn by default or not
        # (a fat-tree's up ports under d-mod-k, a rail cluster's spine): multipath routing reads them
        self._path_bits = path_bits or choice_bits
        self._waypoint = waypoint  # a builder whose routes correct one dimension after another says where
        # (stride, size) of the ring dimensions whose size is even (> 2): where antipodes tie
        self._tie_rings = [(d, dim_stride(self.dim_sizes, d), dim.size) for d, dim in enumerate(self.dims)
                           if dim.kind == "ring" and dim.size > 2 and dim.size % 2 == 0]
        expected = reduce(lambda a, b: a * b, (d.size for d in self.dims), 1)
        if expected != npus:
            raise ValueError(f"dimension sizes multiply to {expected}, not {npus} NPUs")
        self.links: list[Link] = []
        self._link_of: dict[tuple[int, int], Link] = {}  # (u, v) -> link: `link()` reads it for every
        # hop of every route built (networkx's edge view took 1 us a lookup)
        for index, (u, v) in enumerate(sorted(graph.edges)):
            data = graph.edges[u, v]
            data["id"] = index
            link = Link(index, u, v, data["bandwidth"], data["latency"], data.get("dim", -1), self._link_kind(u, v))
            self.links.append(link)
            self._link_of[u, v] = link
        self._routes: dict[tuple[int, int, int], tuple[int, ...]] = {}
        self._paths: dict[tuple[int, int], tuple] = {}

    # ---------------------------------------------------------------- structure
    @cached_property
    def graph(self) -> nx.DiGraph:
        """The nodes and links as a networkx DiGraph (each link's data with its `id`), built on first use."""
        return self._built.to_networkx()

    @property
    def nodes(self) -> list[int]:
        """Every node, NPUs and switches, in the order the builder added them."""
        return list(self._built.nodes)

    @property
    def switches(self) -> list[int]:
        return [n for n in self._built.nodes if n >= self.npus]

    def tier(self, link: Link) -> str:
        """The tier the builder gave a link (a dragonfly's "local" or "global", a rail cluster's
        "rail"...), else its kind ("npu-switch"...)."""
        return self._built.edges[link.src, link.dst].get("tier", link.kind)

    def is_switch(self, node: int) -> bool:
        return node >= self.npus

    def _link_kind(self, u: int, v: int) -> str:
        name = {False: "npu", True: "switch"}
        return f"{name[self.is_switch(u)]}-{name[self.is_switch(v)]}"

    def link(self, u: int, v: int) -> Link:
        """The link from node `u` to node `v` (KeyError if there is none)."""
        return self._link_of[u, v]

    def link_ids(self, path: Sequence[int]) -> list[int]:
        """The ids of the links along node path `path` (the packet backend builds a route's table from them)."""
        links = self._link_of
        return [links[hop].id for hop in zip(path, path[1:])]

    def coords(self, npu: int) -> tuple[int, ...]:
        """Per-dimension coordinates of an NPU; dimension 0 varies fastest (ASTRA-sim's order)."""
        return coords_of(npu, self.dim_sizes)

    def npu_at(self, coords: Sequence[int]) -> int:
        return npu_of(coords, self.dim_sizes)

    def peers(self, npu: int, dim: int) -> list[int]:
        """The NPUs that differ from `npu` only along `dim`, in order of their coordinate there."""
        base = list(self.coords(npu))
        group = []
        for c in range(self.dims[dim].size):
            base[dim] = c
            group.append(self.npu_at(base))
        return group

    # ---------------------------------------------------------------- routing
    def route(self, src: int, dst: int, ties: int = 0) -> tuple[int, ...]:
        """The node path from `src` to `dst` (minimal); an antipode tie in ring dimension d goes
        the negative way if bit d of `ties` is set, else the positive way (see `tie_dims`)."""
        key = (src, dst, ties)
        path = self._routes.get(key)
        if path is None:
            path = tuple(self._router(self, src, dst, ties))
            self._routes[key] = path
        return path

    def waypoint(self, src: int, dst: int) -> tuple[int, int] | None:
        """(NPU, dimension d) where the route from `src` to `dst` leaves the first dimension it
        corrects, d, to go on in others (dimension-ordered builders only; else None): route(src, dst,
        ties) is then route(src, NPU, ties) and route(NPU, dst, ties) joined, the first leg's links
        in d, the second's above it, each reading only its own dimensions' bits of `ties` (the
        packet backend joins their route tables)."""
        return None if self._waypoint is None else self._waypoint(self, src, dst)

    def tie_rule(self, rule: str) -> None:
        """Break antipode ties at random per message ("random") or always the positive way ("positive")."""
        self.route_ties = rule

    def tie_breaker(self, seed: int, multipath: bool = False) -> "RouteTies":
        """A backend's source of tie bits for its messages' routes (see the module docstring);
        `multipath`: ECMP's, a path drawn per message among all of `paths()`."""
        return RouteTies(self, seed, multipath)

    def tie_dims(self, src: int, dst: int) -> int:
        """Bit mask of the ring dimensions in which `dst` is `src`'s antipode: both ways round are
        minimal there, and `route()` takes the one its `ties` bit names. (A topology built with
        `choice_bits` answers with those: e.g. the bits of a fat-tree's up-port choices.)"""
        if self._choice_bits is not None:
            return self._choice_bits(src, dst)
        mask = 0
        for d, stride, size in self._tie_rings:
            if (dst // stride - src // stride) % size == size // 2:
                mask |= 1 << d
        return mask

    def paths(self, src: int, dst: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """Every distinct minimal path `route()` gives from `src` to `dst`, as (its tie bits, its node
        path), over all values of the pair's antipode-tie and path-choice bits; the default route
        (tie bits 0) first."""
        key = (src, dst)
        found = self._paths.get(key)
        if found is None:
            mask = self.tie_dims(src, dst) | (self._path_bits(src, dst) if self._path_bits else 0)
            seen: dict[tuple[int, ...], int] = {}
            bits = 0
            while True:  # every sub-mask of `mask`, 0 first
                seen.setdefault(self.route(src, dst, bits), bits)
                bits = (bits - mask) & mask
                if not bits:
                    break
            found = self._paths[key] = tuple((bits, path) for path, bits in seen.items())
        return found

    def hops(self, src: int, dst: int) -> int:
        return len(self.route(src, dst)) - 1

    def routed_diameter(self) -> int:
        """The largest routed hop count between two NPUs, by routing every pair (tests check the closed form)."""
        return max((self.hops(s, d) for s in range(self.npus) for d in range(self.npus)), default=0)

    def summary(self) -> dict:
        """Figures `netsim topo` prints."""
        return {
            "name": self.name,
            "kind": self.kind,
            "npus": self.npus,
            "switches": len(self.switches),
            "links": len(self.links),
            "diameter_hops": self.diameter_hops,
            "bisection_bandwidth_GBps": self.bisection_bandwidth,
            "dims": [f"{d.kind} {d.size} ({d.bandwidth:g} GB/s, {d.latency:g} ns)" for d in self.dims],
            "link_groups": self.link_groups(),
        }

    def link_groups(self) -> list[str]:
        """Directed links counted by kind (the builder's `tier` where it names one, e.g. a dragonfly's
        local and global links), bandwidth and latency: where a fabric's links differ."""
        counts: dict[tuple, int] = {}
        for link in self.links:
            key = (self.tier(link), link.bandwidth, link.latency)
            counts[key] = counts.get(key, 0) + 1
        return [f"{count} {kind} ({bandwidth:g} GB/s, {latency:g} ns)"
                for (kind, bandwidth, latency), count in sorted(counts.items())]


def choice_width(count: int) -> int:
    """Bits of `ties` that pick one of `count` equal choices (a builder adds their value, modulo
    `count`, to its default choice): log2 of a power of two, else enough to reach every choice."""
    return (count - 1).bit_length()


def line_steps(src: int, dst: int) -> list[int]:
    """Coordinates visited along a line (a mesh dimension: no wrap-around link)."""
    step = 1 if dst > src else -1
    return list(range(src + step, dst + step, step))


def coords_of(npu: int, sizes: Sequence[int]) -> tuple[int, ...]:
    """NPU id -> coordinates, dimension 0 fastest."""
    result = []
    for size in sizes:
        result.append(npu % size)
        npu //= size
    return tuple(result)


def npu_of(coords: Sequence[int], sizes: Sequence[int]) -> int:
    """Coordinates (wrapped into range) -> NPU id, dimension 0 fastest."""
    npu, stride = 0, 1
    for c, size in zip(coords, sizes):
        npu += (c % size) * stride
        stride *= size
    return npu


def add_link_pair(graph: LinkGraph, u: int, v: int, bandwidth: float, latency: float, dim: int, **extra) -> None:
    """Add the two directed links of a bidirectional connection (`extra`: more edge data, e.g. `tier`)."""
    graph.add_edge(u, v, bandwidth=bandwidth, latency=latency, dim=dim, **extra)
    graph.add_edge(v, u, bandwidth=bandwidth, latency=latency, dim=dim, **extra)


class RouteTies:
    """Draws the tie bits of each new message's route (`Topology.route`) by the topology's rule, or
    (`multipath`: ECMP) of a path drawn uniformly among the pair's equal minimal paths, per message."""

    __slots__ = ("topology", "at_random", "draws", "multipath")

    def __init__(self, topology: Topology, seed: int, multipath: bool = False):
        self.topology = topology
        self.multipath = multipath
        self.at_random = topology.route_ties == "random"  # else ties go the positive way
        self.draws = PairDraws(seed)  # one draw per tied message (ECMP: per message) of a pair

    def ties(self, src: int, dst: int) -> int:
        """The tie bits of the pair's next message: `fixed`, or drawn for this message."""
        if self.multipath:
            fixed = self.fixed(src, dst)
            return self.pick(src, dst) if fixed is None else fixed
        tied = self._drawn(src, dst)
        return tied & self.draws.next(src, dst) if tied else 0

    def fixed(self, src: int, dst: int) -> int | None:
        """The tie bits every message of the pair gets without a draw (one minimal path, or ties
        broken the positive way); None when `ties` draws them per message."""
        if self.multipath:
            paths = self.topology.paths(src, dst)
            return paths[0][0] if len(paths) == 1 else None
        return None if self._drawn(src, dst) else 0

    def _drawn(self, src: int, dst: int) -> int:
        """Bit mask of the ring dimensions whose antipode ties the pair's messages draw (0: none)."""
        return self.topology.tie_dims(src, dst) if self.at_random else 0

    def pick(self, src: int, dst: int) -> int:
        """The tie bits of a path drawn uniformly among `Topology.paths(src, dst)` for the pair's
        next message (or packet, for a caller that draws per packet)."""
        paths = self.topology.paths(src, dst)
        if len(paths) == 1:
            return paths[0][0]
        return paths[self.draws.next(src, dst) % len(paths)][0]


class PairDraws:
    """64 random bits per draw for a (source, destination) pair: the pair's k-th draw is
    mix64(seed, source, destination, k), a hash, so it does not depend on the order in which events
    of one instant run. Only pairs that draw are kept, one count each (a 4096-NPU all-to-all has
    16.7 M pairs)."""

    __slots__ = ("seed", "seeded", "drawn")

    def __init__(self, seed: int):
        self.seed = seed
        self.seeded = mix64(seed)  # the hash's state after the seed, where every draw goes on from
        self.drawn: dict[tuple[int, int], int] = {}  # pair -> draws so far

    def next(self, src: int, dst: int) -> int:
        pair = (src, dst)
        k = self.drawn.get(pair, 0)
        self.drawn[pair] = k + 1
        return mix64(src, dst, k, state=self.seeded)  # = mix64(seed, src, dst, k)


SPLIT_ROUTINGS = ("spray", "adaptive")  # packet-backend routings the other backends take as an even split
FIXED_ROUTINGS = ("dor", "dor-booksim", "dragonfly-min", "ecmp")  # a path fixed per message, taken as is


class MessagePaths:
    """The paths a backend without packets gives a message under the packet backend's routing unit
    (`garnet.routing`): the same path where it is fixed per message (the default route's, or
    ECMP's hash: `tie_breaker`); where packets choose their own by credits or per packet (`spray`,
    `adaptive`), an even split of the bytes over the pair's equal paths (`Topology.paths`: a
    fat-tree's up ports, a rail cluster's spines; the one dimension-order route elsewhere); where
    they take non-minimal or per-packet oblivious routes (`valiant`, `romm`, `xy-yx`, `ugal`), the
    minimal route. Either of the last two is said in `warning`."""

    def __init__(self, topology: Topology, seed: int, routing: str):
        self.topology = topology
        self.multipath = routing == "ecmp"
        self.split = routing in SPLIT_ROUTINGS
        self.ties = topology.tie_breaker(seed, multipath=self.multipath).ties
        if self.split:
            self.warning = (f"garnet.routing = {routing!r} chooses a path per packet or per hop; this backend splits "
                            "each message evenly over its equal minimal paths instead")
        elif routing not in FIXED_ROUTINGS:
            self.warning = (f"garnet.routing = {routing!r} chooses a path per packet; this backend sends each message "
                            "on its minimal route instead")
        else:
            self.warning = ""

    def per_message(self, src: int, dst: int) -> bool:
        """Do messages from `src` to `dst` take paths of their own (drawn, or split), not one route?"""
        topo = self.topology
        if self.multipath or self.split:
            return len(topo.paths(src, dst)) > 1
        return topo.route_ties == "random" and bool(topo.tie_dims(src, dst))

    def shares(self, src: int, dst: int, nbytes: int) -> list[tuple[int, int]]:
        """(tie bits of a path, bytes it carries) of the pair's next message."""
        if not self.split:
            return [(self.ties(src, dst), nbytes)]
        paths = self.topology.paths(src, dst)
        each, rest = divmod(nbytes, len(paths))
        return [(ties, each + (i < rest)) for i, (ties, _) in enumerate(paths) if each + (i < rest)]


MIX64_START = 0x9E3779B97F4A7C15


def mix64(*values: int, state: int = MIX64_START) -> int:
    """64 well-mixed bits from integers (SplitMix64's finalizer over each in turn), going on from
    `state`: mix64(a, b, state=mix64(a)) == mix64(a, b)."""
    x = state
    for value in values:
        x = (x ^ (value & 0xFFFFFFFFFFFFFFFF)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
        x = (x ^ (x >> 27)) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 31
    return x


def dim_stride(sizes: Sequence[int], dim: int) -> int:
    """How much an NPU id changes per step along `dim` (dimension 0 fastest)."""
    stride = 1
    for size in sizes[:dim]:
        stride *= size
    return stride


def ring_steps(src: int, dst: int, size: int, negative_on_tie: bool = False) -> list[int]:
    """Coordinates visited going the shorter way round a ring; halfway round, the positive way
    unless `negative_on_tie`."""
    forward = (dst - src) % size
    backward = size - forward
    if forward < backward or (forward == backward and not negative_on_tie):
        return [(src + k) % size for k in range(1, forward + 1)]
    return [(src - k) % size for k in range(1, backward + 1)]
