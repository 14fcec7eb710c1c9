"""Routing units by name (`garnet.routing`): each decides the path of a message or packet and the
VC class of every hop (its VCs' deadlock-avoidance rule, argued in its docstring), and answers a
router's route computation, `output(router, packet) -> (output unit, lowest VC, VC bound)`, or,
a unit with `choices`, `options(router, vc)`: the routes of which VC allocation takes one.

- fixed per message: `dor`, `dor-booksim`, `dragonfly-min` (dimension_order.py), `ecmp`
  (multipath.py): the packets of a message follow its table, in order;
- drawn per packet when the NIC cuts it: `spray` (multipath.py), `valiant`, `romm`, `xy-yx`
  (oblivious.py);
- chosen on the way from the credits of the candidate outputs: `adaptive` per hop (on a fat-tree or
  rail cluster: multipath.py; on a mesh or torus, whichever of the minimal outputs and the escape
  route VC allocation gets first: escape.py), `ugal` at the source router (ugal.py).
Packets of one message on different paths arrive out of order; the NIC completes the message when
its last packet, whichever it is, has arrived. Each topology kind lists the units that are
deadlock-free on it (`TopologyKind.routings`, the first its default).
"""

from __future__ import annotations

from typing import Callable

from netsim.garnet.routing.base import (ANY, CHOOSE, HIGH, HOPS, LOW, NEXT, RoutingUnit, class_range, table_output,
                                        vc_range)
from netsim.garnet.routing.dimension_order import BookSimDateline, DimensionOrder, DragonflyMinimal
from netsim.garnet.routing.escape import ESCAPE_KINDS, EscapeAdaptive
from netsim.garnet.routing.multipath import ECMP, Adaptive, Spray
from netsim.garnet.routing.oblivious import ROMM, XYYX, Valiant
from netsim.garnet.routing.ugal import UGAL
from netsim.topology import Topology


def adaptive(topology: Topology, seed: int, dateline: bool = True) -> RoutingUnit:
    """`adaptive`: the unit of that name for the topology's kind (see the module docstring)."""
    unit = EscapeAdaptive if topology.kind in ESCAPE_KINDS else Adaptive
    return unit(topology, seed, dateline)


ROUTING: dict[str, Callable[..., RoutingUnit]] = {unit.name: unit for unit in (
    DimensionOrder, BookSimDateline, DragonflyMinimal, ECMP, Spray, Valiant, ROMM, XYYX, UGAL)}
ROUTING["adaptive"] = adaptive

__all__ = ["ANY", "CHOOSE", "HIGH", "HOPS", "LOW", "NEXT", "ROUTING", "RoutingUnit", "class_range", "table_output",
           "vc_range"]
