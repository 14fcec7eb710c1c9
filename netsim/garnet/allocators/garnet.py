"""Garnet's router model (gem5 Garnet's SwitchAllocator), the default: separable, input first.

Every flit crosses `router_latency` cycles of pipeline from its arrival (buffer write and route
computation, then switch allocation). Each cycle:
- SA-I: every input port picks one of its VCs, round robin from the VC after its last winner: the
  first whose front flit is ready, whose output link is free, and that holds a credit (a body or
  tail) or finds a free downstream VC with room (a head: Garnet's `has_free_vc`);
- SA-II: every output picks one of the input ports that chose it, round robin from the port after
  its last winner; a winning head takes its downstream VC now (`OutputUnit.select_vc`: the free VC
  with the most credits, round robin among equals; Garnet takes the first idle one).
So every input port gets an equal share of a contended output, however many VCs it keeps busy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from netsim.garnet.allocators.base import SwitchAllocator
from netsim.garnet.clock import NEVER
from netsim.garnet.crossbar import traverse

if TYPE_CHECKING:  # (types only)
    from netsim.garnet.input_unit import VirtualChannel
    from netsim.garnet.output_unit import OutputUnit
    from netsim.garnet.router import Router


class GarnetAllocator(SwitchAllocator):
    name: ClassVar[str] = "garnet"

    def __init__(self, router: Router, routing, whole_packets: bool, batch: bool):
        super().__init__(router, routing, whole_packets, batch)
        self.next_vc = [0] * len(router.inputs)  # SA-I: per input port, where its VC search starts
        self.next_port = [0] * len(router.outputs)  # SA-II: per output, where its port search starts
        self.ports = len(router.inputs)

    def signature(self) -> tuple:
        return tuple(self.next_vc), tuple(self.next_port)

    def allocate(self, cycle: int) -> int:
        """One cycle of switch allocation and traversal; returns when to step again (NEVER: only
        when woken)."""
        occupied = self.router.occupied
        if len(occupied) == 1:  # the usual case at low load: nothing to arbitrate
            for vc in occupied:
                return self._lone(vc, cycle)
        wake_at = NEVER
        picked: dict[Any, Any] = {}  # input port -> (its round-robin distance, VC, downstream VC or -1): SA-I so far
        contenders: dict[Any, Any] = {}  # packet fidelity: input port -> the outputs its VCs that may bid want
        next_vc, whole = self.next_vc, self.whole_packets
        for vc in occupied:
            port = vc.port
            ready = vc.ready
            if not ready:  # mid-packet: its next flit is still upstream (its arrival wakes us)
                continue
            at = ready[0]
            if at <= vc.tail_left:  # a VC is a FIFO: its next packet leaves after the last one's tail (in flit
                # fidelity the port's busy_until already holds it back; packet fidelity shares the port's slots)
                at = vc.tail_left + 1
            if at <= cycle:
                at = port.next_free(cycle)  # a batch (or packets in packet fidelity) may be crossing
            if at > cycle:
                if at < wake_at:
                    wake_at = at
                continue
            distance = (vc.index - next_vc[port.index]) % len(port.vcs)
            best = picked.get(port)
            if best is not None and best[0] < distance and not whole:  # a VC first in turn bids here
                continue
            out = vc.out
            if out is None:
                out = self.route(vc)
            at = out.next_free(cycle)
            if at > cycle:
                if at < wake_at:
                    wake_at = at
                continue
            out_vc = vc.out_vc
            if out_vc < 0:  # a head: needs a free downstream VC with room for it
                room = vc.packets[0].nflits if whole else 1
                out_vc = out.select_vc(vc.lo, vc.hi, cycle, room)
                if out_vc < 0:
                    out.wait(cycle)
                    at = out.free_cycle(vc.lo, vc.hi, cycle, room, NEVER)
                    if at < wake_at:
                        wake_at = at
                    continue
                out_vc = -1 - out_vc  # chosen, not taken yet
            elif out.credits[out_vc] <= 0 and out.absorb(out_vc, cycle) <= 0:
                out.wait(cycle)
                at = out.credit_cycle(out_vc, cycle)
                if at < wake_at:
                    wake_at = at
                continue
            if whole:
                contenders.setdefault(port, []).append(out)
                if best is not None and best[0] < distance:
                    continue
            if best is not None:
                wake_at = cycle + 1  # the VC it displaces bids again next cycle
            picked[port] = (distance, vc, out_vc)
        if not picked:
            return wake_at
        if len(picked) == 1:
            for port, (_, vc, out_vc) in picked.items():
                at_port = self._waiting(contenders, port, {vc.out}) if whole else 1
                at = self._grant(vc, vc.out, out_vc, cycle, at_port, 1)
                return at if at < wake_at else wake_at
        bids: dict[Any, Any] = {}  # output unit -> (its round-robin distance, VC, downstream VC, bidders): SA-II so far
        next_port, ports = self.next_port, self.ports
        for port, (_, vc, out_vc) in picked.items():
            out = vc.out
            distance = (port.index - next_port[out.index]) % ports
            leader = bids.get(out)
            if leader is None:
                bids[out] = (distance, vc, out_vc, 1)
            else:
                wake_at = cycle + 1  # the port that loses bids again next cycle
                count = leader[3] + 1
                bids[out] = (distance, vc, out_vc, count) if distance < leader[0] else (*leader[:3], count)
        for out, (_, vc, out_vc, bidders) in bids.items():
            at = self._grant(vc, out, out_vc, cycle, self._waiting(contenders, vc.port, bids) if whole else 1, bidders)
            if at < wake_at:
                wake_at = at
        return wake_at

    @staticmethod
    def _waiting(contenders: dict, port, bid) -> int:
        """Packet fidelity: the VCs at `port` that bid next cycle and win (those wanting an output
        nobody has bid for now, `bid`), this cycle's winner included."""
        return 1 + sum(1 for out in contenders.get(port, ()) if out not in bid)

    def _lone(self, vc: VirtualChannel, cycle: int) -> int:
        """SA-I and SA-II with `vc` the only VC of the router holding a packet."""
        ready = vc.ready
        if not ready:
            return NEVER
        port = vc.port
        out = vc.out
        if out is None:
            out = self.route(vc)
        at = out.next_free(port.next_free(max(ready[0], vc.tail_left + 1, cycle)))
        if at > cycle:
            return at
        out_vc = vc.out_vc
        if out_vc < 0:
            room = vc.packets[0].nflits if self.whole_packets else 1
            out_vc = out.select_vc(vc.lo, vc.hi, cycle, room)
            if out_vc < 0:
                out.wait(cycle)
                return out.free_cycle(vc.lo, vc.hi, cycle, room, NEVER)
            out_vc = -1 - out_vc
        elif out.credits[out_vc] <= 0 and out.absorb(out_vc, cycle) <= 0:
            out.wait(cycle)
            return out.credit_cycle(out_vc, cycle)
        return self._grant(vc, out, out_vc, cycle, 1, 1)

    def _grant(self, vc: VirtualChannel, out: OutputUnit, out_vc: int, cycle: int, at_port: int, at_output: int) -> int:
        """`vc` wins `out` at `cycle` (a head with `out_vc` = -1 - the VC it chose): it crosses;
        returns when its input port may bid again (NEVER if it holds nothing more). `at_port` and
        `at_output`: VCs that could bid at its input port, ports that bid for its output now (a
        whole packet leaves room for those that lose now, beside the packets already crossing)."""
        port = vc.port
        self.next_vc[port.index] = (vc.index + 1) % len(port.vcs)
        self.next_port[out.index] = (port.index + 1) % self.ports
        if out_vc < 0:
            out_vc = -1 - out_vc
            out.claim(out_vc)
            vc.grant(out_vc)
        leaving = self.leaving(vc, out, cycle, cycle, max(at_port, at_output))
        traverse(self.router, vc, out, leaving)
        return port.next_free(cycle + 1) if port.occupied else NEVER
