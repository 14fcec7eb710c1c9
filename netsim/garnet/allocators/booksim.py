"""BookSim2's input-queued router model (`router = iq`, `vc_allocator = switch allocator = islip`,
one iteration, not speculative), with its stage timing.

Stages of a head: route computation (RC, `router_latency - 3` cycles, BookSim's routing_delay),
VC allocation (VA, 1 cycle), switch allocation (SA, 1 cycle), switch traversal (ST, 1 cycle); body
and tail flits only SA and ST. RC starts when the head has arrived (BookSim reads a flit the cycle
after its link delivered it) and, behind a packet in the same VC, the cycle after that packet's
tail won SA. A head retries VA every cycle until it wins; VA runs before SA, so a head granted a
VC bids for the switch in the next cycle. After a VC is freed, a waiting head thus needs VA and SA
again: two cycles more than Garnet's model, which allocates the VC inside SA.

- VA: every head in VA asks for every free downstream VC of its class (BookSim does not check
  credits there); iSLIP with round-robin grant pointers per downstream VC (over input VCs) and
  accept pointers per input VC (over downstream VCs).
- SA: per input port and output, the VC first in round-robin order from the VC after the port's
  last winner bids (if it holds a credit); iSLIP with grant pointers per output (over input ports)
  and accept pointers per input port (over outputs).
A NIC consumes an ejected flit a cycle after its link delivered it, as BookSim's terminal does; its
credit allows a departure as many cycles later as a downstream router's would.
"""

from __future__ import annotations

from typing import Any, ClassVar

from netsim.garnet.allocators.base import SwitchAllocator
from netsim.garnet.clock import NEVER
from netsim.garnet.crossbar import traverse


class BookSimAllocator(SwitchAllocator):
    name: ClassVar[str] = "booksim"
    # The ejection credit loop is as long as a router-to-router one (5 cycles with 1-cycle links):
    # BookSim's terminal reads a flit a cycle after its link delivered it and returns the credit
    # then, as a downstream router does at switch allocation; the credit then takes its link and the
    # router's switch allocation before the next flit departs. Counted as 2 cycles of consumption
    # (1 missed the allocation cycle: a 16-flit packet through a 4-flit ejection VC did not stall a
    # cycle in 5 as in BookSim's trace, 3 cycles short at zero load on a single router).
    eject_consume: ClassVar[int] = 2

    def __init__(self, router, routing, whole_packets: bool, batch: bool, router_latency: int):
        super().__init__(router, routing, whole_packets, batch)
        self.route_cycles = router_latency - 3  # BookSim's routing_delay
        inputs, outputs = router.inputs, router.outputs
        self.input_vcs = sum(len(port.vcs) for port in inputs)
        self.out_vcs = [(out, vc) for out in outputs for vc in range(len(out.credits))]  # global index -> VC
        self.out_base = []  # per output: global index of its VC 0
        base = 0
        for out in outputs:
            self.out_base.append(base)
            base += len(out.credits)
        self.va_grant = [0] * len(self.out_vcs)  # per downstream VC: next input VC (rank) to grant
        self.va_accept = [0] * self.input_vcs  # per input VC: next downstream VC to accept
        self.sa_grant = [0] * len(outputs)  # per output: next input port to grant
        self.sa_accept = [0] * len(inputs)  # per input port: next output to accept
        self.sa_vc = [0] * len(inputs)  # per input port: VC first in turn to bid for an output

    @staticmethod
    def stage(pipeline: int, router_latency: int) -> int:
        """A body flit may leave 2 cycles after its arrival (BookSim reads it a cycle late, then SA
        and ST), plus any latency of a switch's own."""
        return pipeline - router_latency + 2

    @classmethod
    def check(cls, router_latency: int) -> str:
        if router_latency < 3:
            return (f"garnet.allocator = 'booksim' models BookSim's pipeline (route computation, VC and "
                    f"switch allocation, switch traversal): router_latency must be at least 3 (BookSim's "
                    f"default is 4), got {router_latency}")
        return ""

    def signature(self) -> tuple:
        return (tuple(self.va_grant), tuple(self.va_accept), tuple(self.sa_grant), tuple(self.sa_accept),
                tuple(self.sa_vc))

    def allocate(self, cycle: int) -> int:
        """One cycle: VA, then SA and traversal; returns when to step again (NEVER: only when woken)."""
        wake_at = NEVER
        va_bids = []  # (VC, its free downstream VCs by global index)
        sa_bids: dict[Any, Any] = {}  # input port -> {output unit: the VC that bids for it}
        for vc in self.router.occupied:
            ready = vc.ready
            if not ready:  # mid-packet: its next flit is still upstream (its arrival wakes us)
                continue
            at = ready[0]
            if at > cycle:
                if at < wake_at:
                    wake_at = at
                continue
            out = vc.out
            if out is None:  # RC
                out = self.route(vc)
                vc.gate(max(at, vc.tail_left + 1) + self.route_cycles)
            if vc.out_vc < 0 or vc.sent == 0:
                at = vc.head_from
                if at > cycle:
                    if at < wake_at:
                        wake_at = at
                    continue
            if vc.out_vc < 0:  # VA
                room = vc.packets[0].nflits if self.whole_packets else 0
                base = self.out_base[out.index]
                free = [base + v for v in range(vc.lo, vc.hi) if out.is_free(v, cycle)
                        and (not room or out.usable(v, cycle + out.lookahead) >= room)]
                if free:
                    va_bids.append((vc, free))
                else:
                    out.wait(cycle)
                    at = out.free_cycle(vc.lo, vc.hi, cycle, room, NEVER)
                    if at < wake_at:
                        wake_at = at
                continue
            port = vc.port  # SA
            at = out.next_free(port.next_free(cycle))
            if at > cycle:
                if at < wake_at:
                    wake_at = at
                continue
            if not self.whole_packets and out.absorb(vc.out_vc, cycle) < 1:  # (VA took one with room
                # for a whole packet in packet fidelity)
                out.wait(cycle)
                at = out.credit_cycle(vc.out_vc, cycle)
                if at < wake_at:
                    wake_at = at
                continue
            bids = sa_bids.setdefault(port, {})
            rival = bids.get(out)
            if rival is None or self._vc_first(port, vc, rival):
                bids[out] = vc
        if va_bids:
            self._allocate_vcs(va_bids, cycle)
            wake_at = min(wake_at, cycle + 1)
        if sa_bids:
            at = self._allocate_switch(sa_bids, cycle)
            if at < wake_at:
                wake_at = at
        return wake_at

    def _vc_first(self, port, vc, rival) -> bool:
        """Does `vc` come before `rival` (same port) in the port's round-robin order?"""
        start, n = self.sa_vc[port.index], len(port.vcs)
        return (vc.index - start) % n < (rival.index - start) % n

    def _allocate_vcs(self, bids, cycle: int) -> None:
        """VA by one iSLIP iteration; winners may bid for the switch from the next cycle."""
        inputs, outputs = self.input_vcs, len(self.out_vcs)
        if len(bids) == 1:  # every VC asked for grants it: only the accept pointer decides
            vc, free = bids[0]
            start = self.va_accept[vc.rank]
            self._take(vc, min(free, key=lambda g: (g - start) % outputs), cycle)
            return
        askers: dict[int, list] = {}
        for vc, free in bids:
            for g in free:
                askers.setdefault(g, []).append(vc)
        granted = {}
        for g, vcs in askers.items():
            start = self.va_grant[g]
            granted[g] = min(vcs, key=lambda vc: (vc.rank - start) % inputs)
        for vc, free in bids:
            mine = [g for g in free if granted[g] is vc]
            if mine:
                start = self.va_accept[vc.rank]
                self._take(vc, min(mine, key=lambda g: (g - start) % outputs), cycle)

    def _take(self, vc, g: int, cycle: int) -> None:
        """`vc` accepts downstream VC `g` (global index)."""
        self.va_grant[g] = (vc.rank + 1) % self.input_vcs
        self.va_accept[vc.rank] = (g + 1) % len(self.out_vcs)
        out, out_vc = self.out_vcs[g]
        out.claim(out_vc)
        vc.grant(out_vc)
        vc.gate(cycle + 1)

    def _allocate_switch(self, bids, cycle: int) -> int:
        """SA by one iSLIP iteration, and traversal of the winners; returns when to step again."""
        if len(bids) == 1:  # one port bids (a third of the calls at load 0.3): it wins what it bids for
            ((port, by_out),) = bids.items()
            if len(by_out) == 1:
                ((out, vc),) = by_out.items()
                return self._cross(port, out, vc, cycle, 1)
        ports, outs = len(self.router.inputs), len(self.router.outputs)
        wake_at = NEVER
        askers: dict = {}
        for port, by_out in bids.items():
            for out in by_out:
                askers.setdefault(out, []).append(port)
        granted = {}
        for out, asking in askers.items():
            if len(asking) > 1:
                start = self.sa_grant[out.index]
                granted[out] = min(asking, key=lambda port: (port.index - start) % ports)
                wake_at = cycle + 1  # the others bid again
            else:
                granted[out] = asking[0]
        for port, by_out in bids.items():
            mine = [out for out in by_out if granted[out] is port]
            if not mine:
                continue
            if len(by_out) > 1:
                wake_at = cycle + 1
            if len(mine) > 1:
                start = self.sa_accept[port.index]
                out = min(mine, key=lambda out: (out.index - start) % outs)
            else:
                out = mine[0]
            # packet fidelity: room left for the ports that bid for this output now, and for this
            # port's bids for outputs nobody else asked for (both win in the next cycles)
            share = max(len(askers[out]), 1 + sum(1 for other in by_out if other is not out and len(askers[other]) == 1))
            at = self._cross(port, out, by_out[out], cycle, share)
            if at < wake_at:
                wake_at = at
        return wake_at

    def _cross(self, port, out, vc, cycle: int, share: int) -> int:
        """`vc` (at `port`) has won `out`: the pointers move past them and its flits cross (`share`:
        see SwitchAllocator.leaving); returns when `port` may bid again (NEVER: it holds nothing)."""
        self.sa_grant[out.index] = (port.index + 1) % len(self.router.inputs)
        self.sa_accept[port.index] = (out.index + 1) % len(self.router.outputs)
        self.sa_vc[port.index] = (vc.index + 1) % len(port.vcs)
        traverse(self.router, vc, out, self.leaving(vc, out, cycle, cycle, share))
        return port.next_free(cycle + 1) if port.occupied else NEVER

    def earliest_bid(self, vc, cycle: int) -> int:
        """A lower bound on the cycle `vc` may next win the switch (see SwitchAllocator.leaving)."""
        ready = vc.ready
        if not ready:
            return cycle + 1
        if vc.out_vc >= 0:
            return max(ready[0], vc.head_from) if vc.sent == 0 else ready[0]
        if vc.out is not None:  # in VA, which has run for this cycle
            return max(vc.head_from, cycle + 1) + 1
        return max(ready[0], vc.tail_left + 1) + self.route_cycles + 1
