"""Routes with VC classes. `Topology.route()` already gives the deterministic minimal path of
every topology kind (dimension order on tori and hierarchical graphs, through the switch, up/down
on fat-trees); here each hop gets the range of downstream VCs it may use.

Rings need a dateline to be deadlock-free: a packet enters a ring in class 0 (the lower half of
the VCs) and moves to class 1 (the upper half) on the ring's wrap-around link, between coordinates
size-1 and 0; it starts again in class 0 in the next dimension. Every other hop (switch,
fully-connected, fat-tree) may use any VC: up/down and one-hop-per-dimension routes have no
cyclic channel dependency.
"""

from __future__ import annotations

from netsim.errors import ConfigError
from netsim.topology import Topology

ANY, LOW, HIGH = -1, 0, 1  # VC classes


def dateline_rings(topology: Topology) -> set[int]:
    """Dimensions whose links form rings with a wrap-around (size > 2)."""
    return {d for d, dim in enumerate(topology.dims) if dim.kind == "ring" and dim.size > 2}


def check_vcs(topology: Topology, vcs_of_dim, dateline: bool) -> None:
    """A ring dimension with a dateline needs >= 2 VCs per port; say so clearly."""
    if not dateline:
        return
    for d in sorted(dateline_rings(topology)):
        if vcs_of_dim(d) < 2:
            raise ConfigError(f"garnet.vcs = {vcs_of_dim(d)}: dimension {d} is a ring of "
                              f"{topology.dims[d].size}, which needs >= 2 VCs per port for "
                              "deadlock-free dateline routing (set garnet.vcs = 2 or more)")


def ring_links(topology: Topology, dateline: bool) -> list[tuple[int, bool]]:
    """Per link id: (the dateline ring dimension the link runs along, or -1; whether it is the
    ring's wrap-around link, between coordinates size-1 and 0). Computed once per network, so
    that building a route needs no coordinate arithmetic."""
    rings = dateline_rings(topology) if dateline else set()
    info = []
    for link in topology.links:
        u, v, dim = link.src, link.dst, link.dim
        if dim not in rings or topology.is_switch(u) or topology.is_switch(v):
            info.append((-1, False))
            continue
        size = topology.dims[dim].size
        info.append((dim, {topology.coords(u)[dim], topology.coords(v)[dim]} == {0, size - 1}))
    return info


def hop_classes(rings: list[tuple[int, bool]], link_ids) -> list[int]:
    """The VC class (ANY, LOW or HIGH) of each hop of a route given by its link ids; `rings` is
    `ring_links()`."""
    classes = []
    current_dim, crossed = -1, False
    for link_id in link_ids:
        dim, wrap = rings[link_id]
        if dim < 0:
            classes.append(ANY)
            continue
        if dim != current_dim:
            current_dim, crossed = dim, False
        if wrap:
            crossed = True
        classes.append(HIGH if crossed else LOW)
    return classes


def vc_range(vc_class: int, vcs: int) -> tuple[int, int]:
    """The downstream VCs [lo, hi) a hop of `vc_class` may claim at a port with `vcs` VCs."""
    if vc_class == ANY:
        return 0, vcs
    half = vcs // 2
    return (0, half) if vc_class == LOW else (half, vcs)
