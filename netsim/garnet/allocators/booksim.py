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
  credits there), on every route it is offered (a unit with `choices`: BookSim's route set);
  iSLIP with round-robin grant pointers per downstream VC (over input VCs) and accept pointers
  per input VC (over downstream VCs, of every output).
- SA: per input port and output, the VC first in round-robin order from the VC after the port's
  last winner bids (if it holds a credit); iSLIP with grant pointers per output (over input ports)
  and accept pointers per input port (over outputs).
A NIC consumes an ejected flit a cycle after its link delivered it, as BookSim's terminal does; its
credit allows a departure as many cycles later as a downstream router's would.
"""

from __future__ import annotations

from typing import ClassVar

from netsim.garnet.allocators.base import SwitchAllocator
from netsim.garnet.clock import NEVER
from netsim.garnet.tables import counts
from netsim.garnet import crossbar  # (the module: the compiled modules import one another as they load)


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
        self.vc_out = [out for out in outputs for vc in range(len(out.credits))]  # global VC index -> its output
        self.out_vcs = len(self.vc_out)  # (how many)
        self.out_base = counts(len(outputs))  # per output: global index of its VC 0
        for k in range(1, len(outputs)):
            self.out_base[k] = self.out_base[k - 1] + len(outputs[k - 1].credits)
        # Pointers and requests are arrays of 64-bit integers (C arrays in the compiled build):
        self.va_grant = counts(self.out_vcs)  # per downstream VC: next input VC (rank) to grant
        self.va_accept = counts(self.input_vcs)  # per input VC: next downstream VC to accept
        self.sa_grant = counts(len(outputs))  # per output: next input port to grant
        self.sa_accept = counts(len(inputs))  # per input port: next output to accept
        self.sa_vc = counts(len(inputs))  # per input port: VC first in turn to bid for an output
        # This cycle's requests, gathered by `allocate` and emptied by the allocation that serves them
        # (kept from cycle to cycle, so that a cycle allocates nothing). The lists of askers and bidders
        # have a slot per input VC or port and a count in use: filling and emptying them allocates nothing.
        self.va_vcs = [None] * self.input_vcs  # VA: the VCs that ask, in the router's order (va_askers of them)
        self.va_askers = 0
        self.va_until = counts(self.input_vcs)  # per asking VC: the end of its requests in `va_asked`
        # the downstream VCs asked for (global index), asker by asker: each asks for a downstream VC
        # at most once (the routes a unit offers take disjoint VCs)
        self.va_asked = counts(self.input_vcs * self.out_vcs)
        self.va_count = 0  # requests in `va_asked`
        self.va_granted = counts(self.out_vcs, -1)  # per downstream VC: rank of the asker it grants (-1: none)
        self.outs = len(outputs)
        self.sa_ports = [None] * len(inputs)  # SA: the input ports that bid, in the order of their first bid
        self.sa_bidders = 0  # (sa_bidders of them)
        self.sa_outs = counts(len(inputs))  # per input port: outputs it bids for
        self.sa_bid = counts(len(inputs) * len(outputs), -1)  # per (input port, output): index of the VC that bids (-1: none)
        self.sa_askers = counts(len(outputs))  # per output: input ports that bid for it
        self.sa_granted = counts(len(outputs), -1)  # per output: the input port it grants (-1: none)

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

    def port_state(self, port) -> tuple:
        """The arbitration state of input port `port` alone (partitions.py): its VCs' VA pointers, its
        SA pointer and the VC first in turn to bid."""
        return tuple([self.va_accept[vc.rank] for vc in port.vcs]), self.sa_accept[port.index], self.sa_vc[port.index]

    def output_state(self, out) -> tuple:
        """The arbitration state of output unit `out` alone (partitions.py): its VCs' VA pointers and its
        SA pointer."""
        base = self.out_base[out.index]
        return tuple([self.va_grant[base + vc] for vc in range(len(out.credits))]), self.sa_grant[out.index]

    def allocate(self, cycle: int) -> int:
        """One cycle: VA, then SA and traversal; returns when to step again (NEVER: only when woken)."""
        wake_at = NEVER
        outs = self.outs
        for vc in self.router.occupied:
            held = vc.port.held_until
            if held >= cycle:  # fast-forwarded ahead with its partition (partitions.py)
                if held < wake_at:
                    wake_at = held + 1
                continue
            ready = vc.ready
            if not ready.count:  # mid-packet: its next flit is still upstream (its arrival wakes us)
                continue
            at = ready.front()
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
                if not self._ask_vcs(vc, cycle):
                    at = self.wait_for_vc(vc, cycle, vc.front.nflits if self.whole_packets else 0)
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
            slot = port.index * outs + out.index
            rival = self.sa_bid[slot]
            if rival < 0:
                if not self.sa_outs[port.index]:
                    self.sa_ports[self.sa_bidders] = port
                    self.sa_bidders += 1
                self.sa_outs[port.index] += 1
                self.sa_bid[slot] = vc.index
            elif self._vc_first(port, vc.index, rival):
                self.sa_bid[slot] = vc.index
        if self.va_count:
            self._allocate_vcs(cycle)
            if cycle + 1 < wake_at:
                wake_at = cycle + 1
        if self.sa_bidders:
            at = self._allocate_switch(cycle)
            if at < wake_at:
                wake_at = at
        return wake_at

    def _vc_first(self, port, vc: int, rival: int) -> bool:
        """Does VC `vc` come before VC `rival` (indices at `port`) in the port's round-robin order?"""
        start, n = self.sa_vc[port.index], len(port.vcs)
        return (vc - start) % n < (rival - start) % n

    def _ask_vcs(self, vc, cycle: int) -> bool:
        """VA request: `vc` asks for every free downstream VC of its class at its output (in packet
        fidelity with room for its packet), or of every route it is offered (BookSim's route set);
        each asked VC keeps the asker first in its grant order. Returns False if there is none to
        ask for."""
        room = vc.front.nflits if self.whole_packets else 0
        first = self.va_count
        options = vc.options
        if options is None:
            self._ask_output(vc, vc.out, vc.lo, vc.hi, cycle, room)
        else:
            for out, lo, hi in options:
                self._ask_output(vc, out, lo, hi, cycle, room)
        if self.va_count == first:
            return False
        self.va_until[self.va_askers] = self.va_count
        self.va_vcs[self.va_askers] = vc
        self.va_askers += 1
        return True

    def _ask_output(self, vc, out, lo: int, hi: int, cycle: int, room: int) -> None:
        """`vc` asks for the free downstream VCs in [lo, hi) of output `out` (see `_ask_vcs`)."""
        base = self.out_base[out.index]
        inputs = self.input_vcs
        count = self.va_count
        for v in range(lo, hi):
            if out.is_free(v, cycle) and (not room or out.usable(v, cycle + out.lookahead) >= room):
                g = base + v
                self.va_asked[count] = g
                count += 1
                best = self.va_granted[g]
                if best < 0 or (vc.rank - self.va_grant[g]) % inputs < (best - self.va_grant[g]) % inputs:
                    self.va_granted[g] = vc.rank
        self.va_count = count

    def _allocate_vcs(self, cycle: int) -> None:
        """VA by one iSLIP iteration over the requests `_ask_vcs` gathered this cycle (every asked
        downstream VC grants its first asker in turn; every asker accepts its first grant in turn);
        winners may bid for the switch from the next cycle. Leaves the request lists empty."""
        outputs = self.out_vcs
        first = 0
        for k in range(self.va_askers):
            vc = self.va_vcs[k]
            until = self.va_until[k]
            start = self.va_accept[vc.rank]
            best = -1
            for i in range(first, until):
                g = self.va_asked[i]
                if self.va_granted[g] == vc.rank and (best < 0 or (g - start) % outputs < (best - start) % outputs):
                    best = g
            first = until
            if best >= 0:
                self._take(vc, best, cycle)
        for i in range(self.va_count):
            self.va_granted[self.va_asked[i]] = -1
        self.va_count = 0
        self.va_askers = 0

    def _take(self, vc, g: int, cycle: int) -> None:
        """`vc` accepts downstream VC `g` (global index), and with it the route it is on."""
        self.va_grant[g] = (vc.rank + 1) % self.input_vcs
        self.va_accept[vc.rank] = (g + 1) % self.out_vcs
        out = self.vc_out[g]
        out_vc = g - self.out_base[out.index]
        if vc.options is not None:
            for option, lo, hi in vc.options:
                if option is out and lo <= out_vc < hi:
                    vc.route_to(out, lo, hi)
                    break
        out.claim(out_vc)
        vc.grant(out_vc)
        vc.gate(cycle + 1)

    def _allocate_switch(self, cycle: int) -> int:
        """SA by one iSLIP iteration over the bids gathered this cycle (`sa_bid`: per input port
        and output, the VC first in turn), and traversal of the winners; returns when to step
        again. Leaves the bids empty."""
        ports, outs = len(self.router.inputs), self.outs
        wake_at = NEVER
        bidders = self.sa_ports
        for k in range(self.sa_bidders):  # every output grants the asking port first in its turn
            port = bidders[k]
            p = port.index
            for o in range(outs):
                if self.sa_bid[p * outs + o] >= 0:
                    self.sa_askers[o] += 1
                    best = self.sa_granted[o]
                    start = self.sa_grant[o]
                    if best < 0 or (p - start) % ports < (best - start) % ports:
                        self.sa_granted[o] = p
        for k in range(self.sa_bidders):  # every port accepts the output first in its turn among its grants
            port = bidders[k]
            p = port.index
            start = self.sa_accept[p]
            won, alone = -1, 0
            for o in range(outs):
                if self.sa_bid[p * outs + o] >= 0:
                    if self.sa_askers[o] > 1:
                        wake_at = cycle + 1  # the ports that lose bid again
                    else:
                        alone += 1
                    if self.sa_granted[o] == p and (won < 0 or (o - start) % outs < (won - start) % outs):
                        won = o
            if won < 0:
                continue
            if self.sa_outs[p] > 1:
                wake_at = cycle + 1  # its other bids come again
            # packet fidelity: room left for the ports that bid for this output now, and for this
            # port's bids for outputs nobody else asked for (both win in the next cycles)
            share = max(self.sa_askers[won], 1 + alone - (1 if self.sa_askers[won] == 1 else 0))
            at = self._cross(port, self.router.outputs[won], port.vcs[self.sa_bid[p * outs + won]], cycle, share)
            if at < wake_at:
                wake_at = at
        for k in range(self.sa_bidders):
            port = bidders[k]
            p = port.index
            self.sa_outs[p] = 0
            for o in range(outs):
                self.sa_bid[p * outs + o] = -1
                self.sa_askers[o] = 0
                self.sa_granted[o] = -1
        self.sa_bidders = 0
        return wake_at

    def _cross(self, port, out, vc, cycle: int, share: int) -> int:
        """`vc` (at `port`) has won `out`: the pointers move past them and its flits cross (`share`:
        see SwitchAllocator.leaving); returns when `port` may bid again (NEVER: it holds nothing)."""
        self.sa_grant[out.index] = (port.index + 1) % len(self.router.inputs)
        self.sa_accept[port.index] = (out.index + 1) % len(self.router.outputs)
        self.sa_vc[port.index] = (vc.index + 1) % len(port.vcs)
        crossbar.traverse(self.router, vc, out, self.leaving(vc, out, cycle, cycle, share))
        return port.next_free(cycle + 1) if port.occupied else NEVER

    def earliest_bid(self, vc, cycle: int) -> int:
        """A lower bound on the cycle `vc` may next win the switch (see SwitchAllocator.leaving)."""
        ready = vc.ready
        if not ready.count:
            return cycle + 1
        if vc.out_vc >= 0:
            return max(ready.front(), vc.head_from) if vc.sent == 0 else ready.front()
        if vc.out is not None:  # in VA, which has run for this cycle
            return max(vc.head_from, cycle + 1) + 1
        return max(ready.front(), vc.tail_left + 1) + self.route_cycles + 1
