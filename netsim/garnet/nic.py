"""Network interface of an NPU, one object per port: an `Injector` per injection port (packetize,
one flit per cycle under credits) and a `Receiver` per ejection port (count arriving tails,
complete messages). An NPU has one of each per router link or one of each in all
(`garnet.nic_ports`; GarnetNetwork picks a message's ports by its route's first and last link).

Each injection link into the NPU's router and each ejection link out of it takes one cycle and
carries one flit per cycle; the NIC always accepts ejected flits.
"""

from __future__ import annotations

from collections import deque

from netsim.garnet.clock import NEVER
from netsim.garnet.packet import Message, Packet


class Injector:
    """One injection port: a FIFO of messages, cut into packets as they go, injected flit by flit
    (a packet whose credits are all there leaves in one step: the same timing)."""

    __slots__ = ("network", "clock", "queue", "packet", "flit", "out_vc", "out", "next_wake",
                 "whole_packets", "batch", "tail_at")

    def __init__(self, network, batch: bool = True):
        self.network = network
        self.clock = network.clock
        self.queue: deque[Message] = deque()
        self.packet: Packet | None = None  # the packet being injected
        self.flit = 0  # flits of it already injected
        self.tail_at = -1  # cycle the tail of a packet sent whole leaves
        self.out_vc = -1  # injection-port VC claimed by the current packet
        self.out = None  # OutputPort into the router's injection input port
        self.next_wake = NEVER
        self.whole_packets = network.params.whole_packets
        self.batch = batch or self.whole_packets  # send a packet in one step when it has the credits

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
        if packet is None:
            if not self.queue:
                return
            message = self.queue[0]
            start = max(message.start, self.out.busy_until)  # the previous packet's tail may still be leaving
            if start > cycle:
                self.clock.wake(self, start)
                return
            packet = self.network.cut_packet(message, cycle)
            if not message.unsent:
                self.queue.popleft()
            self.packet = packet
            self.flit = 0
        out = self.out
        out_vc = self.out_vc
        if out_vc < 0:  # head flit: claim a VC of the injection port
            room = packet.nflits if self.whole_packets else 0  # virtual cut-through: a VC with room for it
            out_vc = out.allocate(0, len(out.credits), cycle, room)
            if out_vc < 0:
                self._wait(out.wait_vc(0, len(out.credits), cycle, room))
                return
            self.out_vc = out_vc
        if self.flit == 0 and self.batch:
            nflits = packet.nflits
            credits = out.credits[out_vc]
            if credits < nflits:
                credits = out.absorb(out_vc, cycle)
            if credits >= nflits:
                # Credits for every flit: they leave one per cycle whatever happens downstream, so
                # send them all now and step again only when the tail has left.
                packet.injected = cycle
                out.forward_packet(packet, out_vc, cycle)
                self.flit = nflits
                self.tail_at = cycle + nflits - 1
                if nflits == 1 or not (packet.last and packet.msg.handed_off is not None):
                    self._finish(packet, self.tail_at)  # nobody waits for the tail: move on already
                else:  # the message's sender is told when its last tail has left
                    self.clock.wake(self, self.tail_at)
                return
            if self.whole_packets:  # packet fidelity: wait for room for the whole packet
                self._wait(out.wait_credit(out_vc, cycle, nflits - credits))
                return
        if not out.credits[out_vc] and not out.absorb(out_vc, cycle):
            self._wait(out.wait_credit(out_vc, cycle))
            return
        self.flit += 1
        if self.flit == 1:
            packet.injected = cycle
        tail = self.flit == packet.nflits
        out.forward(packet, out_vc, self.flit == 1, tail, cycle)
        if tail:
            self._finish(packet, cycle)
        else:
            self.clock.wake(self, cycle + 1)

    def _finish(self, packet: Packet, cycle: int) -> None:
        """The tail of `packet` leaves at `cycle`: the NIC moves on to the next packet."""
        self.packet = None
        self.out_vc = -1
        message = packet.msg
        if packet.last and message.handed_off is not None:
            self.network.traffic_changed()
            message.handed_off.succeed()
        if self.queue:
            self.clock.wake(self, cycle + 1)

    def _wait(self, credit_at: int) -> None:
        if credit_at != NEVER:
            self.clock.wake(self, credit_at)


class Receiver:
    """One ejection port: tail flits arrive in cycle order (the port carries one flit per cycle);
    each completes a packet."""

    __slots__ = ("network", "clock", "arrivals", "next_wake")

    def __init__(self, network):
        self.network = network
        self.clock = network.clock
        self.arrivals: deque = deque()  # (cycle, packet) of tails still on the ejection link
        self.next_wake = NEVER

    def arrive(self, packet: Packet, cycle: int) -> None:
        self.arrivals.append((cycle, packet))
        self.clock.wake(self, cycle)

    def step(self, cycle: int) -> None:
        arrivals = self.arrivals
        while arrivals and arrivals[0][0] <= cycle:
            _, packet = arrivals.popleft()
            self.network.packet_arrived(packet, cycle)
        if arrivals:  # a tail announced while this step was already due: its wake-up was dropped
            self.clock.wake(self, arrivals[0][0])
