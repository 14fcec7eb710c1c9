"""Router: input ports with VC buffers, route computation, VC and switch allocation, crossbar.

This is the hot path of the packet backend (with `OutputPort` in link.py and the NIC).

One wake-up of a router at cycle c, in this order (it sets the buffer turnaround time):
0. VCs whose packet's head has become ready join the turn order, in (ready cycle, port, VC)
   order: turn order never depends on the order routers are stepped within a cycle;
1. visit the VCs in turn order (a VC that has just sent a tail goes to the back: round-robin per
   packet, so no input starves; a VC in the middle of a packet keeps its place while it waits for
   the rest of it);
2. a VC whose front flit has finished the pipeline (ready <= c) and whose input port is free asks
   for its output: the head flit reads the output port and VC class from the packet's route and
   claims a free downstream VC (atomic: one packet per VC); any flit then needs the output link
   free and a credit for its downstream VC;
3. the winner crosses the crossbar: its link is busy for `cpf` cycles, the flit lands in the
   downstream buffer `latency + cpf - 1` cycles later and is ready `pipeline` cycles after that,
   and a credit goes back upstream over the reverse link;
4. the router asks to be woken at the earliest cycle anything it waits for can change.
Separable allocation in turn order: each input port and each output sends at most one flit per cycle.

Whole packets in one step (`_send_packet`):
- packet fidelity (virtual cut-through): a head that holds credits for the whole packet sends it
  as a unit; the output link and the input port stay busy until the tail has left;
- flit fidelity (`batch`): a packet whose flits are all ready in time, whose credits are all held
  and that no VC ahead in turn order can contend with leaves exactly as it would flit by flit, so
  it is sent in one step too (tests check the results are identical with batching off);
- the usual case at low load, a router holding one packet and nothing else, skips the turn-order
  bookkeeping (`_send_lone`).
"""

from __future__ import annotations

from bisect import insort
from collections import deque

from netsim.garnet.clock import NEVER


class VCBuffer:
    """One virtual channel of an input port: flit ready-cycles and the packets they belong to."""

    __slots__ = ("port", "index", "rank", "ready", "packets", "sent", "out", "out_vc", "peak", "residency")

    def __init__(self, port: "InputPort", index: int):
        self.port = port
        self.index = index
        self.rank = index  # tie-break among VCs of a router that become ready in the same cycle
        self.ready: deque[int] = deque()  # per flit (front first): cycle it may leave this router
        self.packets: deque = deque()  # packets with flits here (two only under tail-sent release)
        self.sent = 0  # flits of the front packet already sent on
        self.out = None  # output port claimed by the front packet
        self.out_vc = -1  # downstream VC claimed by the front packet
        self.peak = 0  # most flits held or on the wire towards it (credits in use)
        self.residency = 0  # flit-cycles spent in this buffer (mean occupancy = residency / cycles)


class InputPort:
    """An input port: `vcs` buffers of `depth` flits; returns credits to its upstream port."""

    __slots__ = ("name", "vcs", "depth", "upstream", "credit_latency", "busy_until", "link_id")

    def __init__(self, name: str, vcs: int, depth: int, credit_latency: int, link_id: int):
        self.name = name
        self.vcs = [VCBuffer(self, v) for v in range(vcs)]
        self.depth = depth
        self.upstream = None  # the OutputPort (router or NIC) feeding this port
        self.credit_latency = credit_latency
        self.busy_until = 0  # first cycle this port may send a flit through the crossbar again
        self.link_id = link_id

    @property
    def residency(self) -> int:
        """Flit-cycles spent in this port's buffers (mean occupancy = residency / cycles)."""
        return sum(vc.residency for vc in self.vcs)


def _join_order(vc: VCBuffer) -> tuple[int, int]:
    return vc.ready[0], vc.rank


def join(router: "Router", vc: VCBuffer) -> None:
    """`vc` of `router` has just been sent the head of a packet (its first flit in `ready`): it will
    join the turn order when that head is ready. `joining` stays sorted, so admitting is a scan."""
    joining = router.joining
    if not joining or _join_order(joining[-1]) <= _join_order(vc):  # the common case: in order
        joining.append(vc)
    else:
        insort(joining, vc, key=_join_order)


class Router:
    """A router (an NPU's own router, or a switch); see the module docstring for one wake-up."""

    __slots__ = ("clock", "node", "pipeline", "inputs", "outputs", "active", "joining", "next_wake",
                 "last_move", "whole_packets", "batch")

    def __init__(self, clock, node: int, pipeline: int, whole_packets: bool = False, batch: bool = True):
        self.clock = clock
        self.node = node
        self.pipeline = pipeline  # router_latency (+ a switch's own latency), cycles
        self.inputs: list[InputPort] = []
        self.outputs: list = []
        # VCs whose front packet's head has been ready here (and not all its flits left), in turn order
        self.active: list[VCBuffer] = []
        # VCs with a head on its way: they join `active` when it is ready, in (cycle, rank) order, so
        # turn order never depends on the order in which routers happen to step within a cycle
        self.joining: list[VCBuffer] = []
        self.next_wake = NEVER
        self.last_move = 0  # cycle this router last sent a flit (deadlock detection)
        self.whole_packets = whole_packets  # packet fidelity: packets move as units (virtual cut-through)
        self.batch = batch  # flit fidelity: send an unobstructed packet in one step (same timing)

    def add_input(self, port: InputPort) -> None:
        base = sum(len(other.vcs) for other in self.inputs)  # ports may have different VC counts
        for vc in port.vcs:
            vc.rank = base + vc.index
        self.inputs.append(port)

    def step(self, cycle: int) -> None:
        active = self.active
        joining = self.joining
        if not active and len(joining) == 1 and joining[0].ready[0] <= cycle:
            vc = joining.pop()
            if self._send_lone(vc, cycle):
                return
            active.append(vc)
        wake_at = NEVER
        if joining:
            if joining[-1].ready[0] <= cycle:  # the usual case: all of them (in order: `joining` is sorted)
                active.extend(joining)
                joining.clear()
            else:
                wake_at = self._admit(cycle)
        if not active:
            if wake_at != NEVER:
                self.clock.wake(self, wake_at)
            return
        node = self.node
        for vc in active[:]:  # a copy: senders move to the back as we go
            ready = vc.ready
            if not ready:  # mid-packet, its next flit still upstream: it keeps its turn (forward wakes us)
                continue
            at = ready[0]
            if at > cycle:
                if at < wake_at:
                    wake_at = at
                continue
            port = vc.port
            if port.busy_until > cycle:  # this input is using the crossbar
                if port.busy_until < wake_at:
                    wake_at = port.busy_until
                continue
            packet = vc.packets[0]
            out = vc.out
            head = out is None
            if head:  # route computation
                out, lo, hi = packet.route[node]
            if out.busy_until > cycle:
                if out.busy_until < wake_at:
                    wake_at = out.busy_until
                continue
            if not head:
                out_vc = vc.out_vc
            elif out.eject:
                out_vc = vc.out_vc = 0
                vc.out = out
            else:  # VC allocation: one packet per downstream VC (virtual cut-through: one with room for it)
                room = packet.nflits if self.whole_packets else 0
                if out.full == cycle and out.full_class == (lo, hi, room):  # another such head found none now
                    continue
                out_vc = out.allocate(lo, hi, cycle, room)
                if out_vc < 0:
                    out.full = cycle
                    out.full_class = (lo, hi, room)
                    credit_at = out.wait_vc(lo, hi, cycle, room)
                    if credit_at < wake_at:
                        wake_at = credit_at
                    continue
                vc.out = out
                vc.out_vc = out_vc
            nflits = packet.nflits
            if self.whole_packets:  # virtual cut-through: credits for the whole packet, or wait
                credits = NEVER if out.eject else out.credits[out_vc]
                if credits < nflits:
                    credits = out.absorb(out_vc, cycle)
                    if credits < nflits:
                        credit_at = out.wait_credit(out_vc, cycle, nflits - credits)
                        if credit_at < wake_at:
                            wake_at = credit_at
                        continue
                active.remove(vc)
                at = self._send_packet(vc, packet, out, out_vc, cycle)
                if at < wake_at:
                    wake_at = at
                continue
            if (head and self.batch and out.cpf == 1 and len(ready) == nflits and ready[-1] < cycle + nflits
                    and (out.eject or out.credits[out_vc] >= nflits or out.absorb(out_vc, cycle) >= nflits)
                    and (active[0] is vc or self._unopposed(vc, port, out))):  # first in turn: no call
                # Flits arrive at least a cycle apart, so `ready[-1] < cycle + nflits` means flit k is
                # ready by cycle + k: with its credits held and no VC ahead in turn order able to claim
                # this input or output meanwhile, the packet leaves exactly as flit by flit, in one step.
                active.remove(vc)
                at = self._send_packet(vc, packet, out, out_vc, cycle)
                if at < wake_at:
                    wake_at = at
                continue
            if not out.eject and not out.credits[out_vc] and not out.absorb(out_vc, cycle):
                credit_at = out.wait_credit(out_vc, cycle)
                if credit_at < wake_at:
                    wake_at = credit_at
                continue
            # switch traversal: one flit leaves this buffer
            ready.popleft()
            port.busy_until = cycle + 1
            vc.residency += cycle - at + self.pipeline
            port.upstream.credit(vc.index, cycle + port.credit_latency)
            sent = vc.sent + 1
            tail = sent == nflits
            out.forward(packet, out_vc, sent == 1, tail, cycle)
            if tail:
                vc.packets.popleft()
                vc.sent = 0
                vc.out = None
                active.remove(vc)
                if ready:
                    self._requeue(vc, cycle)
            else:
                vc.sent = sent
            if ready:
                at = ready[0]
                if at <= cycle:
                    at = cycle + 1
                if at < wake_at:
                    wake_at = at
            self.last_move = cycle
        if wake_at != NEVER:
            self.clock.wake(self, wake_at)

    def _send_lone(self, vc: VCBuffer, cycle: int) -> bool:
        """The usual case at low load: `vc`, the only VC of this router holding flits, has a head
        ready, so nothing can contend with it (and it has not joined the turn order). Sends its
        packet whole if it can leave as the general path would send it; else returns False,
        leaving any VC it claimed on `vc` for the general path (which then finds the head past
        allocation, as after a failed batch)."""
        port = vc.port
        packet = vc.packets[0]
        out, lo, hi = packet.route[self.node]
        if port.busy_until > cycle or out.busy_until > cycle:
            return False
        nflits = packet.nflits
        if self.whole_packets:
            whole = True
        else:  # flit fidelity: the packet can leave back to back (the batch condition of `step`)
            ready = vc.ready
            whole = self.batch and out.cpf == 1 and len(ready) == nflits and ready[-1] < cycle + nflits
        if out.eject:
            out_vc = 0
            if not whole:
                return False
        else:
            out_vc = out.allocate(lo, hi, cycle, nflits if self.whole_packets else 0)
            if out_vc < 0:
                return False
            credits = out.credits[out_vc]
            if credits < nflits:
                credits = out.absorb(out_vc, cycle)
            if credits < nflits or not whole:
                vc.out = out
                vc.out_vc = out_vc
                return False
        wake_at = self._send_packet(vc, packet, out, out_vc, cycle)
        if wake_at != NEVER:
            self.clock.wake(self, wake_at)
        return True

    def _admit(self, cycle: int) -> int:
        """Move the joining VCs whose head is ready by `cycle` to the back of the turn order; returns
        the cycle the next one's head will be ready (NEVER if none)."""
        joining = self.joining  # kept sorted by `join` order
        admitted = 0
        for vc in joining:
            if vc.ready[0] > cycle:
                del joining[:admitted]
                return vc.ready[0]
            self.active.append(vc)
            admitted += 1
        joining.clear()
        return NEVER

    def _unopposed(self, vc: VCBuffer, port: InputPort, out) -> bool:
        """No VC ahead of `vc` in turn order shares its input port or wants its output port.

        VCs behind it (including any that start holding flits later) lose every cycle to it anyway."""
        node = self.node
        for other in self.active:
            if other is vc:
                return True
            if other.port is port or (other.out or other.packets[0].route[node][0]) is out:
                return False
        return True

    def _send_packet(self, vc: VCBuffer, packet, out, out_vc: int, cycle: int) -> int:
        """All flits of the front packet of `vc` leave, the head at `cycle`, each one as soon as it is
        ready and the link has carried the one before; the input port is busy until the tail leaves.
        The caller has taken `vc` out of the turn order (a lone VC was never in it); it rejoins if
        it holds another packet. Returns the cycle `vc` may send again (NEVER if it is now empty)."""
        ready = vc.ready
        port = vc.port
        upstream = port.upstream
        credit_latency = port.credit_latency
        returning = upstream.pending[vc.index]  # credits, appended directly (see OutputPort)
        cpf = out.cpf
        nflits = packet.nflits
        tail = cycle + (nflits - 1) * cpf  # back to back
        if ready[nflits - 1] <= tail:  # the usual case: back to back
            departures = None
            if len(ready) == nflits:  # only this packet here: take its flits in bulk
                waited = sum(ready)
                ready.clear()
            else:
                waited = 0
                for _ in range(nflits):
                    waited += ready.popleft()
            residency = nflits * cycle + cpf * nflits * (nflits - 1) // 2 - waited  # sum of departures - ready
            returning.extend(range(cycle + credit_latency, tail + credit_latency + 1, cpf))
        else:  # the tail is still arriving over a slower link: flits leave as they become ready
            departures = []
            depart = cycle
            residency = 0
            for _ in range(nflits):
                at = ready.popleft()
                if at > depart:
                    depart = at
                residency += depart - at
                returning.append(depart + credit_latency)
                departures.append(depart)
                depart += cpf
            tail = departures[-1]
        vc.residency += residency + nflits * self.pipeline
        if upstream.waiting:
            upstream.waiting = False
            # A flit waits for one credit. A whole packet (packet fidelity) under tail-credit release
            # waits only for a VC, free once the last of these credits is back; under tail-sent
            # release it may hold a VC and wait for room in it, which the first credit may give.
            first_useful = tail if self.whole_packets and not upstream.release_on_sent else cycle
            self.clock.wake(upstream.owner, first_useful + credit_latency)
        port.busy_until = tail + 1
        out.forward_packet(packet, out_vc, cycle, departures)
        vc.packets.popleft()
        vc.sent = 0
        vc.out = None
        self.last_move = tail
        if ready:
            self._requeue(vc, cycle)
            return max(ready[0], tail + 1)
        return NEVER

    def _requeue(self, vc: VCBuffer, cycle: int) -> None:
        """`vc` has sent a tail and holds the next packet (tail-sent release): round-robin, it goes
        behind the others; if that packet's head is not ready yet it joins as any arriving head does,
        so turn order is the same whether its upstream stepped before or after this router."""
        if vc.ready[0] > cycle:
            join(self, vc)
        else:
            self.active.append(vc)
