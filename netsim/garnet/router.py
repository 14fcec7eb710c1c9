"""Router: input ports with VC buffers, route computation, VC and switch allocation, crossbar.

One wake-up of a router at cycle c, in this order (it sets the buffer turnaround time):
1. visit the VCs that hold flits in turn order (a VC that has just sent a tail goes to the back:
   round-robin per packet, so no input starves);
2. a VC whose front flit has finished the pipeline (ready <= c) and whose input port has not sent
   this cycle asks for its output: the head flit reads the output port and VC class from the
   packet's route and claims a free downstream VC (atomic: one packet per VC); any flit then
   needs the output link free and a credit for its downstream VC;
3. the winner crosses the crossbar: its link is busy for `cpf` cycles, the flit lands in the
   downstream buffer `latency + cpf - 1` cycles later and is ready `pipeline` cycles after that,
   and a credit goes back upstream over the reverse link;
4. the router asks to be woken at the earliest cycle anything it waits for can change.
Separable allocation in turn order: each input port and each output sends at most one flit per cycle.
"""

from __future__ import annotations

from collections import deque

from netsim.garnet.clock import NEVER


class VCBuffer:
    """One virtual channel of an input port: flit ready-cycles and the packets they belong to."""

    __slots__ = ("port", "index", "ready", "packets", "sent", "out", "out_vc", "peak")

    def __init__(self, port: "InputPort", index: int):
        self.port = port
        self.index = index
        self.ready: deque[int] = deque()  # per flit (front first): cycle it may leave this router
        self.packets: deque = deque()  # packets with flits here (two only under tail-sent release)
        self.sent = 0  # flits of the front packet already sent on
        self.out = None  # output port claimed by the front packet
        self.out_vc = -1  # downstream VC claimed by the front packet
        self.peak = 0  # most flits held or on the wire towards it (credits in use)


class InputPort:
    """An input port: `vcs` buffers of `depth` flits; returns credits to its upstream port."""

    __slots__ = ("router", "name", "vcs", "depth", "upstream", "credit_latency", "sent_at", "residency",
                 "link_id")

    def __init__(self, router: "Router", name: str, vcs: int, depth: int, credit_latency: int, link_id: int):
        self.router = router
        self.name = name
        self.vcs = [VCBuffer(self, v) for v in range(vcs)]
        self.depth = depth
        self.upstream = None  # the OutputPort (router or NIC) feeding this port
        self.credit_latency = credit_latency
        self.sent_at = -1  # last cycle this port sent a flit through the crossbar
        self.residency = 0  # flit-cycles spent in these buffers (mean occupancy = residency / cycles)
        self.link_id = link_id


class Router:
    """A router (an NPU's own router, or a switch); see the module docstring for one wake-up."""

    __slots__ = ("clock", "node", "pipeline", "inputs", "outputs", "active", "next_wake", "last_move")

    def __init__(self, clock, node: int, pipeline: int):
        self.clock = clock
        self.node = node
        self.pipeline = pipeline  # router_latency (+ a switch's own latency), cycles
        self.inputs: list[InputPort] = []
        self.outputs: list = []
        self.active: list[VCBuffer] = []  # VCs holding flits (or flits on the wire to them), in turn order
        self.next_wake = NEVER
        self.last_move = 0  # cycle this router last sent a flit (deadlock detection)

    def step(self, cycle: int) -> None:
        active = self.active
        if not active:
            return
        node = self.node
        pipeline = self.pipeline
        wake_at = NEVER
        for vc in active[:]:  # a copy: senders move to the back as we go
            ready = vc.ready
            at = ready[0]
            if at > cycle:
                if at < wake_at:
                    wake_at = at
                continue
            port = vc.port
            if port.sent_at == cycle:  # this input already used the crossbar this cycle
                wake_at = cycle + 1
                continue
            packet = vc.packets[0]
            out = vc.out
            if out is None:  # head flit: route computation and VC allocation
                out, lo, hi = packet.route[node]
                if out.busy_until > cycle:
                    if out.busy_until < wake_at:
                        wake_at = out.busy_until
                    continue
                if out.eject:
                    out_vc = 0
                else:
                    out_vc = out.allocate(lo, hi, cycle)
                    if out_vc < 0:
                        credit_at = out.wait_vc(lo, hi, cycle)
                        if credit_at < wake_at:
                            wake_at = credit_at
                        continue
                vc.out = out
                vc.out_vc = out_vc
            else:
                if out.busy_until > cycle:
                    if out.busy_until < wake_at:
                        wake_at = out.busy_until
                    continue
                out_vc = vc.out_vc
            if not out.eject and not out.credits[out_vc] and not out.absorb(out_vc, cycle):
                credit_at = out.wait_credit(out_vc, cycle)
                if credit_at < wake_at:
                    wake_at = credit_at
                continue
            # switch traversal: the flit leaves this buffer
            ready.popleft()
            port.sent_at = cycle
            port.residency += cycle - at + pipeline
            port.upstream.credit(vc.index, cycle + port.credit_latency)
            sent = vc.sent + 1
            tail = sent == packet.nflits
            out.forward(packet, out_vc, sent == 1, tail, cycle)
            if tail:
                vc.packets.popleft()
                vc.sent = 0
                vc.out = None
                active.remove(vc)
                if ready:  # round-robin: a VC that finished a packet goes behind the others
                    active.append(vc)
            else:
                vc.sent = sent
            if ready:
                at = ready[0]
                if at <= cycle:
                    at = cycle + 1
                if at < wake_at:
                    wake_at = at
            elif not tail:
                active.remove(vc)
            self.last_move = cycle
        if wake_at != NEVER:
            self.clock.wake(self, wake_at)
