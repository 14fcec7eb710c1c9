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

from netsim.garnet.allocators.base import SwitchAllocator
from netsim.garnet.clock import NEVER
from netsim.garnet.crossbar import traverse


class GarnetAllocator(SwitchAllocator):
    name = "garnet"

    def __init__(self, router, routing, whole_packets: bool, batch: bool):
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
        picked = {}  # input port -> (its round-robin distance, VC, downstream VC or -1): SA-I so far
        next_vc = self.next_vc
        for vc in self.router.occupied:
            port = vc.port
            ready = vc.ready
            if not ready:  # mid-packet: its next flit is still upstream (its arrival wakes us)
                continue
            at = ready[0]
            if at < port.busy_until:  # a packet is crossing (packet fidelity) or a batch leaving
                at = port.busy_until
            if at > cycle:
                if at < wake_at:
                    wake_at = at
                continue
            distance = (vc.index - next_vc[port.index]) % len(port.vcs)
            best = picked.get(port)
            if best is not None and best[0] < distance:  # a VC first in turn already bids here
                continue
            out = vc.out
            if out is None:
                out = self.route(vc)
            if out.busy_until > cycle:
                if out.busy_until < wake_at:
                    wake_at = out.busy_until
                continue
            out_vc = vc.out_vc
            if out_vc < 0:  # a head: needs a free downstream VC with room for it
                room, whole = (vc.packets[0].nflits, True) if self.whole_packets else (1, False)
                out_vc = out.select_vc(vc.lo, vc.hi, cycle, room, whole)
                if out_vc < 0:
                    out.wait(cycle)
                    at = out.free_cycle(vc.lo, vc.hi, cycle, room, NEVER, whole)
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
            if best is not None:
                wake_at = cycle + 1  # the VC it displaces bids again next cycle
            picked[port] = (distance, vc, out_vc)
        if not picked:
            return wake_at
        if len(picked) == 1:
            for port, (_, vc, out_vc) in picked.items():
                at = self._grant(vc, vc.out, out_vc, cycle)
                return at if at < wake_at else wake_at
        bids = {}  # output unit -> (its round-robin distance, VC, downstream VC): SA-II so far
        next_port, ports = self.next_port, self.ports
        for port, (_, vc, out_vc) in picked.items():
            out = vc.out
            distance = (port.index - next_port[out.index]) % ports
            best = bids.get(out)
            if best is None or distance < best[0]:
                bids[out] = (distance, vc, out_vc)
            if best is not None:
                wake_at = cycle + 1  # the port that lost bids again next cycle
        for out, (_, vc, out_vc) in bids.items():
            at = self._grant(vc, out, out_vc, cycle)
            if at < wake_at:
                wake_at = at
        return wake_at

    def _lone(self, vc, cycle: int) -> int:
        """SA-I and SA-II with `vc` the only VC of the router holding a packet."""
        ready = vc.ready
        if not ready:
            return NEVER
        port = vc.port
        at = ready[0] if ready[0] > port.busy_until else port.busy_until
        out = vc.out
        if out is None:
            out = self.route(vc)
        if out.busy_until > at:
            at = out.busy_until
        if at > cycle:
            return at
        out_vc = vc.out_vc
        if out_vc < 0:
            room, whole = (vc.packets[0].nflits, True) if self.whole_packets else (1, False)
            out_vc = out.select_vc(vc.lo, vc.hi, cycle, room, whole)
            if out_vc < 0:
                out.wait(cycle)
                return out.free_cycle(vc.lo, vc.hi, cycle, room, NEVER, whole)
            out_vc = -1 - out_vc
        elif out.credits[out_vc] <= 0 and out.absorb(out_vc, cycle) <= 0:
            out.wait(cycle)
            return out.credit_cycle(out_vc, cycle)
        return self._grant(vc, out, out_vc, cycle)

    def _grant(self, vc, out, out_vc: int, cycle: int) -> int:
        """`vc` wins `out` at `cycle` (a head with `out_vc` = -1 - the VC it chose): it crosses;
        returns when its input port may bid again (NEVER if it holds nothing more)."""
        port = vc.port
        self.next_vc[port.index] = (vc.index + 1) % len(port.vcs)
        self.next_port[out.index] = (port.index + 1) % self.ports
        if out_vc < 0:
            out_vc = -1 - out_vc
            out.claim(out_vc)
            vc.grant(out_vc)
        leaving = self.leaving(vc, out, cycle, cycle)
        traverse(self.router, vc, out, leaving)
        return leaving[-1] + 1 if port.occupied else NEVER
