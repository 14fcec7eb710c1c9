"""Topology builders, looked up by `kind`: a new topology is a registration, not a switch statement."""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

from netsim.topology.base import Dimension, Link, Topology
from netsim.topology.dragonfly import DragonflySpec, build_dragonfly
from netsim.topology.fattree import FatTreeSpec, build_fat_tree, fat_tree_npus
from netsim.topology.hierarchical import HierarchicalSpec, LevelSpec, build_hierarchical
from netsim.topology.rail import RailSpec, build_rail
from netsim.topology.switch import SwitchSpec, build_switch
from netsim.topology.torus import TorusSpec, build_mesh, build_torus


class TopologyKind(NamedTuple):
    spec: type
    build: Callable[[object, str], Topology]
    npus: Callable[[object], int]  # NPUs of a spec, without building it (up-front budgets)
    # the packet backend's routing units that are deadlock-free on this kind, the first its default
    routings: tuple[str, ...]


DIMENSION_ORDER = ("dor", "dor-booksim")
MULTIPATH = ("dor", "ecmp", "spray", "adaptive")  # dor: the fabric's d-mod-k (or per-message random) paths

TOPOLOGY_KINDS: dict[str, TopologyKind] = {
    "torus": TopologyKind(TorusSpec, build_torus, lambda spec: math.prod(spec.dims),
                          (*DIMENSION_ORDER, "adaptive", "valiant")),
    "mesh": TopologyKind(TorusSpec, build_mesh, lambda spec: math.prod(spec.dims),
                         (*DIMENSION_ORDER, "adaptive", "valiant", "romm", "xy-yx")),
    "switch": TopologyKind(SwitchSpec, build_switch, lambda spec: spec.npus, DIMENSION_ORDER),
    "hierarchical": TopologyKind(HierarchicalSpec, build_hierarchical,
                                 lambda spec: math.prod(level.size for level in spec.dims), DIMENSION_ORDER),
    "fat-tree": TopologyKind(FatTreeSpec, build_fat_tree, fat_tree_npus, MULTIPATH),
    "rail": TopologyKind(RailSpec, build_rail, lambda spec: spec.servers * spec.gpus_per_server, MULTIPATH),
    "dragonfly": TopologyKind(DragonflySpec, build_dragonfly, lambda spec: (spec.a * spec.h + 1) * spec.a * spec.p,
                              ("dragonfly-min", "ugal")),
}

__all__ = ["Dimension", "Link", "Topology", "TOPOLOGY_KINDS", "LevelSpec", "TorusSpec", "SwitchSpec",
           "HierarchicalSpec", "FatTreeSpec", "RailSpec", "DragonflySpec"]
