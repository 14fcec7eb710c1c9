"""Network interface of an NPU, one object per port: an `Injector` per injection port (packetize,
one flit per cycle under credits) and a `Receiver` per ejection port (count arriving tails in the
network's packet statistics, complete messages). An NPU has one of each per router link or one of each in all
(`garnet.nic_ports`; GarnetNetwork picks a message's ports by its route's first and last link).

An injection link into the NPU's router and an ejection link out of it take one cycle and carry
one flit per cycle (when NPUs attach to a switch directly, `single_router`, they are the
topology's own links). The NIC takes a new packet's VC like a router (the free VC with the most
credits, round robin among equals) and sends a flit as soon as it holds its credit. Ejection
ports have VCs and credits too: the NIC consumes each flit as it arrives and returns its credit.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from netsim.errors import InvariantError
from netsim.garnet.clock import NEVER, Component, relative
from netsim.garnet import crossbar  # (the module: the compiled modules import one another as they load)
from netsim.garnet.departures import evenly
from netsim.garnet.packet import Message, Packet


class Injector(Component):
    """One injection port: a FIFO of messages, cut into packets as they go, injected flit by flit
    (a packet whose credits are all there leaves in one step: the same timing)."""

    __slots__ = ("network", "clock", "queue", "packet", "flit", "out_vc", "out",
                 "whole_packets", "batch", "tail_at", "per_packet", "sized_bytes", "sized_flits")

    def __init__(self, network, batch: bool = True):
        super().__init__()
        self.network = network
        self.clock = network.clock
        self.queue: deque[Message] = deque()
        self.packet: Packet | None = None  # the packet being injected
        self.flit = 0  # flits of it already injected
        self.tail_at = -1  # cycle the tail of a packet sent whole leaves
        self.out_vc = -1  # injection-port VC taken by the current packet
        self.out: Any = None  # OutputUnit into the router's injection input port
        self.whole_packets = network.params.whole_packets
        self.batch = batch or self.whole_packets  # send a packet in one step when it has the credits
        self.per_packet = network.routing.per_packet  # the routing unit gives each packet a table of its own
        # the flits of the last packet size cut (Params.packet_flits, a Python call, once per size:
        # a message's packets but its last all have its packet size)
        self.sized_bytes = 0
        self.sized_flits = 0

    def submit(self, message: Message) -> None:
        self.queue.append(message)
        if self.packet is None and len(self.queue) == 1:  # idle: start it (`out.busy_until` spaces packets)
            self.clock.wake(self, max(message.start, self.clock.cycle))

    def step(self, cycle: int) -> None:
        packet = self.packet
        if packet is not None and self.flit == packet.nflits:  # a packet sent whole: is its tail out?
            if cycle < self.tail_at:  # an early wake-up (e.g. a credit that came back meanwhile)
                self.clock.wake(self, self.tail_at)
            else:
                self._finish(packet, cycle)
            return
        out = self.out
        if packet is None:
            if not self.queue:
                return
            message = self.queue[0]
            start = max(message.start, out.busy_until)  # the previous packet's tail may still be leaving
            if start > cycle:
                self.clock.wake(self, start)
                return
            packet = self.cut(message)
            if not message.unsent:
                self.queue.popleft()
            self.packet = packet
            self.flit = 0
        nflits = packet.nflits
        out_vc = self.out_vc
        whole = self.whole_packets  # cut-through: a VC with credits for all of it, held or on their way back
        if out_vc < 0:  # head flit: take a VC of the injection port
            nvcs = len(out.credits)
            room = nflits if whole else 1
            out_vc = out.select_vc(0, nvcs, cycle, room)
            if out_vc < 0:
                out.wait(cycle)
                self._wake(out.free_cycle(0, nvcs, cycle, room, NEVER))
                return
            out.claim(out_vc)
            self.out_vc = out_vc
        if self.flit == 0 and (out.absorb(out_vc, cycle) >= nflits and self.batch or whole):
            # Credits for every flit (held; in packet fidelity at least on their way): they leave one
            # per cycle as their credits come back whatever happens downstream, so send them all now
            # and step again only when the tail has left.
            packet.injected = cycle
            leaving = crossbar.departures(None, cycle, nflits, out, out_vc)
            out.send(packet, out_vc, leaving, True, True)
            self.flit = nflits
            self.tail_at = leaving.last
            if nflits == 1 or not (packet.last and packet.msg.handed_off is not None):
                self._finish(packet, self.tail_at)  # nobody waits for the tail: move on already
            else:  # the message's sender is told when its last tail has left
                self.clock.wake(self, self.tail_at)
            return
        if out.busy_until > cycle:  # a slow injection link (single_router) is still busy
            self.clock.wake(self, out.busy_until)
            return
        if out.absorb(out_vc, cycle) <= 0:
            out.wait(cycle)
            self._wake(out.credit_cycle(out_vc, cycle))
            return
        self.flit += 1
        if self.flit == 1:
            packet.injected = cycle
        tail = self.flit == nflits
        out.send(packet, out_vc, evenly(cycle, 1, out.cpf), self.flit == 1, tail)
        if tail:
            self._finish(packet, cycle)
        else:
            self.clock.wake(self, cycle + out.cpf)

    def cut(self, message: Message) -> Packet:
        """Packetize: the next packet of `message` (its packet size, or the bytes left)."""
        network = self.network
        nbytes = min(message.unsent, message.packet_bytes)
        message.unsent -= nbytes
        message.packets_out += 1
        stats = network.packet_stats
        stats.cut_one()
        fast_forward = network.fast_forward
        if fast_forward is not None:  # (the last packet: GarnetNetwork.traffic_changed, without its Python call)
            if message.unsent:
                fast_forward.cut(self, message)
            else:
                fast_forward.changed(message)
        route = network.routing.packet_route(network, message) if self.per_packet else message.route[0]
        if nbytes != self.sized_bytes:
            self.sized_flits = network.params.packet_flits(nbytes)
            self.sized_bytes = nbytes
        return Packet(message, self.sized_flits, nbytes, route, message.unsent == 0)

    def _finish(self, packet: Packet, cycle: int) -> None:
        """The tail of `packet` leaves at `cycle`: the NIC moves on to the next packet."""
        self.packet = None
        self.out_vc = -1
        message = packet.msg
        if packet.last and message.handed_off is not None:
            self.network.traffic_changed(message)
            message.handed_off.succeed()
        if self.queue:
            self.clock.wake(self, cycle + 1)

    def _wake(self, cycle: int) -> None:
        if cycle != NEVER:
            self.clock.wake(self, cycle)

    def in_flight(self, into: dict) -> None:
        """Add the packet it is sending to `into` (id -> packet): a partition skip shifts it."""
        if self.packet is not None:
            into[id(self.packet)] = self.packet

    def signature(self, c: int, name) -> tuple:
        """The port's state relative to cycle `c` (fast-forward; `name(packet)` names a packet)."""
        packet = self.packet
        sent_whole = packet is not None and self.flit == packet.nflits
        return (tuple(map(id, self.queue)), name(packet) if packet else None, self.flit,
                self.tail_at - c if sent_whole else None, self.out_vc, relative(self.next_wake, c),
                self.out.signature(c))

    def shift(self, span: int) -> None:
        if self.next_wake != NEVER:
            self.next_wake += span
        if self.packet is not None and self.flit == self.packet.nflits:
            self.tail_at += span
        self.out.shift(span)


class Receiver(Component):
    """One ejection port: tail flits arrive in cycle order (the port carries one flit at a time);
    each completes a packet."""

    __slots__ = ("network", "clock", "arrivals")

    def __init__(self, network: Any) -> None:
        super().__init__()
        self.network = network
        self.clock = network.clock
        self.arrivals: list = []  # (cycle, packet) of tails still on the ejection link (a few at most)

    def arrive(self, packet: Packet, cycle: int) -> None:
        self.arrivals.append((cycle, packet))
        self.clock.wake(self, cycle)

    def step(self, cycle: int) -> None:
        arrivals = self.arrivals
        while arrivals and arrivals[0][0] <= cycle:
            _, packet = arrivals.pop(0)
            self._arrived(packet, cycle)
        if arrivals:  # a tail announced while this step was already due: its wake-up was dropped
            self.clock.wake(self, arrivals[0][0])

    def _arrived(self, packet: Packet, cycle: int) -> None:
        """`packet`'s tail is here at `cycle`: count it; complete its message if it was the last."""
        network = self.network
        stats = network.packet_stats
        latency = stats.add(packet, cycle)
        if network.fast_forward is not None:
            network.fast_forward.arrived(packet, latency)
        if network.packet_observer is not None:
            network.packet_observer(packet, cycle)
        message = packet.msg
        message.packets_out -= 1
        if network.check_invariants and message.packets_out < 0:
            raise InvariantError(f"message {message.src}->{message.dst} tag {message.tag}: packet arrived twice")
        if message.packets_out == 0 and message.unsent == 0 and message.on_delivered is not None:
            network.traffic_changed(message)
            message.on_delivered(message)

    def in_flight(self, into: dict) -> None:
        """Add the packets whose tails it waits for to `into` (id -> packet): a partition skip shifts them."""
        for _cycle, packet in self.arrivals:
            into[id(packet)] = packet

    def signature(self, c: int, name) -> tuple:
        return tuple([(t - c, name(p)) for t, p in self.arrivals]), relative(self.next_wake, c)

    def shift(self, span: int) -> None:
        if self.next_wake != NEVER:
            self.next_wake += span
        self.arrivals = [(t + span, packet) for t, packet in self.arrivals]

