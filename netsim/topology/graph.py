"""The nodes and directed links a topology builder adds, each link with its data (`bandwidth`,
`latency`, `dim`, and a `tier` where the builder names one): what a `Topology` is made of.

It takes the networkx DiGraph calls the builders make (`add_node`, `add_nodes_from`, `add_edge`,
which updates a link added before) and keeps their order, so `to_networkx()` is the DiGraph they
would have built. networkx is not imported to build one: its import is 0.14 s, a third of a small
run's start-up (scripts/bench_startup.py), and a run reads only the links. `Topology.graph` builds
the DiGraph on first use, for networkx's algorithms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    import networkx as nx


class LinkGraph:
    """Nodes (in the order added) and directed links: (u, v) -> the link's data."""

    __slots__ = ("nodes", "edges")

    def __init__(self) -> None:
        self.nodes: dict[int, None] = {}  # a dict for its order (networkx keeps nodes in the order added)
        self.edges: dict[tuple[int, int], dict] = {}

    def add_node(self, node: int) -> None:
        self.nodes.setdefault(node, None)

    def add_nodes_from(self, nodes: Iterable[int]) -> None:
        for node in nodes:
            self.add_node(node)

    def add_edge(self, u: int, v: int, **data) -> None:
        """The link u -> v with `data` (added to the data of a link u -> v already there, as networkx does)."""
        self.add_node(u)
        self.add_node(v)
        self.edges.setdefault((u, v), {}).update(data)

    def to_networkx(self) -> nx.DiGraph:
        """The same nodes and links, in the same order, as a networkx DiGraph (each link's data copied)."""
        import networkx as nx

        graph = nx.DiGraph()
        graph.add_nodes_from(self.nodes)
        for (u, v), data in self.edges.items():
            graph.add_edge(u, v, **data)
        return graph
