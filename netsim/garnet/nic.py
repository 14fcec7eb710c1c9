"""Network interface of an NPU: injection (packetize, one flit per cycle under credits) and
ejection (count arriving tails, complete messages).

The injection link into the NPU's router and the ejection link out of it both take one cycle and
carry one flit per cycle; the NIC always accepts ejected flits.
"""

from __future__ import annotations

from collections import deque

from netsim.garnet.clock import NEVER
from netsim.garnet.packet import Message, Packet


class Injector:
    """Source side: a FIFO of messages, cut into packets as they go, injected flit by flit."""

    __slots__ = ("network", "npu", "clock", "queue", "packet", "flit", "out_vc", "out", "next_wake",
                 "last_step")

    def __init__(self, network, npu: int):
        self.network = network
        self.npu = npu
        self.clock = network.clock
        self.queue: deque[Message] = deque()
        self.packet: Packet | None = None  # the packet being injected
        self.flit = 0  # flits of it already injected
        self.out_vc = -1  # injection-port VC claimed by the current packet
        self.out = None  # OutputPort into the router's injection input port
        self.next_wake = NEVER
        self.last_step = -1

    def submit(self, message: Message) -> None:
        self.queue.append(message)
        if self.packet is None and len(self.queue) == 1:
            self.clock.wake(self, max(message.start, self.last_step + 1))

    def step(self, cycle: int) -> None:
        self.last_step = cycle
        packet = self.packet
        if packet is None:
            if not self.queue:
                return
            message = self.queue[0]
            if message.start > cycle:
                self.clock.wake(self, message.start)
                return
            packet = self.network.cut_packet(message, cycle)
            if not message.unsent:
                self.queue.popleft()
            self.packet = packet
            self.flit = 0
        out = self.out
        out_vc = self.out_vc
        if out_vc < 0:  # head flit: claim a VC of the injection port
            out_vc = out.allocate(0, len(out.credits), cycle)
            if out_vc < 0:
                self._wait(out.wait_vc(0, len(out.credits), cycle))
                return
            self.out_vc = out_vc
        if not out.credits[out_vc] and not out.absorb(out_vc, cycle):
            self._wait(out.wait_credit(out_vc, cycle))
            return
        self.flit += 1
        if self.flit == 1:
            packet.injected = cycle
        tail = self.flit == packet.nflits
        out.forward(packet, out_vc, self.flit == 1, tail, cycle)
        if tail:
            self.packet = None
            self.out_vc = -1
            message = packet.msg
            if packet.last and message.handed_off is not None:
                message.handed_off.succeed()
            if not self.queue:
                return
        self.clock.wake(self, cycle + 1)

    def _wait(self, credit_at: int) -> None:
        if credit_at != NEVER:
            self.clock.wake(self, credit_at)


class Receiver:
    """Destination side: tail flits arrive in cycle order; each completes a packet."""

    __slots__ = ("network", "clock", "arrivals", "next_wake", "flits")

    def __init__(self, network):
        self.network = network
        self.clock = network.clock
        self.arrivals: deque = deque()  # (cycle, packet) of tails still on the ejection link
        self.next_wake = NEVER
        self.flits = 0

    def arrive(self, packet: Packet, cycle: int) -> None:
        self.arrivals.append((cycle, packet))
        self.clock.wake(self, cycle)

    def step(self, cycle: int) -> None:
        arrivals = self.arrivals
        while arrivals and arrivals[0][0] <= cycle:
            _, packet = arrivals.popleft()
            self.flits += packet.nflits
            self.network.packet_arrived(packet, cycle)
