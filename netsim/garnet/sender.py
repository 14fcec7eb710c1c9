"""The packet network's front door: a new message gets its route and is queued at its injection
port (nic.Injector). GarnetNetwork.send_message comes through here, and so does synthetic traffic,
one message per packet (traffic_source.py), which is why it is part of the compiled core.

Routes are the network's (routes.py, under the routing unit's tie bits). A pair whose
messages all take one route (no tie bits drawn: `RoutingUnit.fixed_ties`) keeps it here, so such a
message costs one lookup; the others draw their tie bits per message, as before.
"""

from __future__ import annotations

from typing import Any

from netsim.garnet.packet import Message


class Sender:
    """Routes and queues the messages of one network (see the module docstring)."""

    __slots__ = ("tables", "routing", "npus", "pair_routes", "fast_forward")

    def __init__(self, network):
        self.tables = network.routes  # (routes.RouteTables)
        self.routing = network.routing
        self.npus = network.topology.npus
        self.pair_routes: dict[int, Any] = {}  # per pair (src * npus + dst): its one route; None: drawn per message
        self.fast_forward = network.fast_forward  # forgets its probes at every new message (or None)

    def route(self, src: int, dst: int) -> tuple:
        """The route (`RouteTables.route`'s tuple) of a new message src -> dst."""
        pair = src * self.npus + dst
        route = self.pair_routes.get(pair, ())
        if route:
            return route
        if route is not None:  # the pair's first message: does it draw?
            fixed = self.routing.fixed_ties(src, dst)
            if fixed is not None:
                route = self.pair_routes[pair] = self.tables.route(src, dst, fixed)
                return route
            self.pair_routes[pair] = None
        return self.tables.route(src, dst, self.routing.ties(src, dst))

    def send(self, src: int, dst: int, nbytes: int, tag, packet_bytes: int, handed_off, on_delivered, now: int,
             delay: int) -> Message:
        """Queue a message of `nbytes` from `src` to `dst` at cycle `now`; its NIC may start it `delay`
        cycles after the topology's NIC latency (see GarnetNetwork.send_message)."""
        route = self.route(src, dst)
        message = Message(src, dst, route, tag, nbytes, packet_bytes, now, now + route[2] + delay, handed_off,
                          on_delivered)
        if self.fast_forward is not None:
            self.fast_forward.changed(None)  # (GarnetNetwork.traffic_changed)
        injector = route[3]
        injector.submit(message)
        return message
