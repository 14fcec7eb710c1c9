"""Topology builders, looked up by `kind`: a new topology is a registration, not a switch statement."""

from __future__ import annotations

import math
from importlib import import_module
from typing import Callable, NamedTuple

from netsim.topology.base import Dimension, Link, Topology
from netsim.topology.hierarchical import HierarchicalSpec, LevelSpec
from netsim.topology.torus import TorusSpec


class TopologyKind(NamedTuple):
    """A kind's builder, by name: its module is imported when the kind is first used (importing every
    builder and its spec dataclass cost a synthetic run a few percent of its start-up)."""

    module: str  # netsim.topology.<module> defines the two below
    spec_name: str  # its spec: the [topology] table's declared keys
    build_name: str  # build(spec, name) -> Topology
    npus: Callable[[object], int]  # NPUs of a spec, without building it (up-front budgets)
    # the packet backend's routing units that are deadlock-free on this kind, the first its default
    routings: tuple[str, ...]

    @property
    def spec(self) -> type:
        """The kind's spec dataclass (its module imported now, if it was not)."""
        return getattr(import_module(f"netsim.topology.{self.module}"), self.spec_name)

    @property
    def build(self) -> Callable[[object, str], Topology]:
        """The kind's builder (its module imported now, if it was not)."""
        return getattr(import_module(f"netsim.topology.{self.module}"), self.build_name)


def fat_tree_npus(spec) -> int:
    """NPUs of a fat-tree spec (fattree.fat_tree_npus, imported when a fat-tree is used)."""
    return import_module("netsim.topology.fattree").fat_tree_npus(spec)


DIMENSION_ORDER = ("dor", "dor-booksim")
MULTIPATH = ("dor", "ecmp", "spray", "adaptive")  # dor: the fabric's d-mod-k (or per-message random) paths

TOPOLOGY_KINDS: dict[str, TopologyKind] = {
    "torus": TopologyKind("torus", "TorusSpec", "build_torus", lambda spec: math.prod(spec.dims),
                          (*DIMENSION_ORDER, "adaptive", "valiant")),
    "mesh": TopologyKind("torus", "TorusSpec", "build_mesh", lambda spec: math.prod(spec.dims),
                         (*DIMENSION_ORDER, "adaptive", "valiant", "romm", "xy-yx")),
    "switch": TopologyKind("switch", "SwitchSpec", "build_switch", lambda spec: spec.npus, DIMENSION_ORDER),
    "hierarchical": TopologyKind("hierarchical", "HierarchicalSpec", "build_hierarchical",
                                 lambda spec: math.prod(level.size for level in spec.dims), DIMENSION_ORDER),
    "fat-tree": TopologyKind("fattree", "FatTreeSpec", "build_fat_tree", fat_tree_npus, MULTIPATH),
    "rail": TopologyKind("rail", "RailSpec", "build_rail", lambda spec: spec.servers * spec.gpus_per_server,
                         MULTIPATH),
    "dragonfly": TopologyKind("dragonfly", "DragonflySpec", "build_dragonfly",
                              lambda spec: (spec.a * spec.h + 1) * spec.a * spec.p, ("dragonfly-min", "ugal")),
}

__all__ = ["Dimension", "Link", "Topology", "TOPOLOGY_KINDS", "LevelSpec", "TorusSpec", "HierarchicalSpec"]
