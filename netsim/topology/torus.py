"""n-dimensional torus (a ring is 1-D) and mesh: each NPU is a router with +/- links in every
dimension; a mesh has no wrap-around links."""

from __future__ import annotations

from dataclasses import dataclass

from netsim.config import list_of, positive_int, scalar_or_list_of, setting
from netsim.topology.base import Topology
from netsim.topology.hierarchical import LevelSpec, build_levels
from netsim.units import parse_link_bandwidth, parse_time


@dataclass(frozen=True)
class TorusSpec:
    """`kind = "torus"` or `"mesh"`: `dims = [4, 4]`; bandwidth and latency per link, or one per dimension."""

    dims: tuple = setting(parse=list_of(positive_int), help="sizes of the dimensions, e.g. [4, 4]")
    bandwidth: object = setting(parse=scalar_or_list_of(parse_link_bandwidth),
                                help="link bandwidth ('50GB/s'), or a list with one per dimension")
    latency: object = setting(parse=scalar_or_list_of(parse_time),
                              help="link latency ('500ns'), or a list with one per dimension")



def per_dim(value, count: int, what: str) -> list:
    """Expand a scalar to one value per dimension; check a list's length."""
    if isinstance(value, tuple):
        if len(value) != count:
            raise ValueError(f"{what} lists {len(value)} values for {count} dimensions")
        return list(value)
    return [value] * count


def _grid(spec: TorusSpec, name: str, kind: str, level_kind: str) -> Topology:
    count = len(spec.dims)
    levels = [LevelSpec(level_kind, size, bw, lat)
              for size, bw, lat in zip(spec.dims, per_dim(spec.bandwidth, count, "bandwidth"),
                                       per_dim(spec.latency, count, "latency"))]
    return build_levels(name, kind, levels)


def build_torus(spec: TorusSpec, name: str) -> Topology:
    return _grid(spec, name, "torus", "ring")


def build_mesh(spec: TorusSpec, name: str) -> Topology:
    return _grid(spec, name, "mesh", "mesh")
