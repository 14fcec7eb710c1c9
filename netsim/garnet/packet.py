"""Message and packet records. Flits are not objects: a VC buffer holds one ready-cycle per flit
and the packets it holds, and a flit is the head when its VC has sent none of its packet yet."""

from __future__ import annotations

from typing import Callable, Hashable


class Message:
    """One send: cut into packets by the source NIC as it injects, delivered when all arrive."""

    __slots__ = ("src", "dst", "route", "tag", "nbytes", "unsent", "packet_bytes", "packets_out", "start",
                 "created", "handed_off", "on_delivered")

    def __init__(self, src: int, dst: int, route: tuple, tag: Hashable, nbytes: int,
                 packet_bytes: int, created: int, start: int, handed_off,
                 on_delivered: Callable[["Message"], None] | None):
        self.src = src
        self.dst = dst
        self.route = route  # GarnetNetwork.route(src, dst), looked up once for all its packets
        self.tag = tag
        self.nbytes = nbytes
        self.unsent = nbytes  # bytes not yet cut into packets
        self.packet_bytes = packet_bytes
        self.packets_out = 0  # packets cut but not yet arrived
        self.created = created  # cycle the message was submitted (its packets' source queueing starts)
        self.start = start  # first cycle it may be injected (after the NIC latency)
        self.handed_off = handed_off  # simpy Event: fires when the last flit left the NIC (or None)
        self.on_delivered = on_delivered  # called when the last tail flit arrives


class Packet:
    """A packet in flight. `route` maps router id -> (output port, lowest VC, VC bound) downstream."""

    __slots__ = ("msg", "nflits", "nbytes", "route", "injected", "last")

    def __init__(self, msg: Message, nflits: int, nbytes: int, route: dict, last: bool):
        self.msg = msg
        self.nflits = nflits
        self.nbytes = nbytes
        self.route = route
        self.injected = -1  # cycle the head flit left the NIC
        self.last = last  # the message's last packet
