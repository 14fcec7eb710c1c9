"""Garnet's router model (gem5 Garnet's SwitchAllocator), the default: separable, input first.

Every flit crosses `router_latency` cycles of pipeline from its arrival (buffer write and route
computation, then switch allocation). Each cycle:
- SA-I: every input port picks one of its VCs, round robin from the VC after its last winner: the
  first whose front flit is ready, whose output link is free, and that holds a credit (a body or
  tail) or finds a free downstream VC with room (a head: Garnet's `has_free_vc`);
- SA-II: every output picks one of the input ports that chose it, round robin from the port after
  its last winner; a winning head takes its downstream VC now (`OutputUnit.select_vc`: the free VC
  with the most credits, round robin among equals; Garnet takes the first idle one). A head
  offered several routes (a routing unit with `choices`) takes, at each attempt, the one with a
  free VC and the most free credits (`_choose`).
So every input port gets an equal share of a contended output, however many VCs it keeps busy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from netsim.garnet.allocators.base import SwitchAllocator
from netsim.garnet.clock import NEVER
from netsim.garnet.tables import counts
from netsim.garnet import crossbar  # (the module: the compiled modules import one another as they load)

if TYPE_CHECKING:  # (types only)
    from netsim.garnet.input_unit import VirtualChannel
    from netsim.garnet.output_unit import OutputUnit
    from netsim.garnet.router import Router


class GarnetAllocator(SwitchAllocator):
    name: ClassVar[str] = "garnet"

    def __init__(self, router: Router, routing, whole_packets: bool, batch: bool):
        super().__init__(router, routing, whole_packets, batch)
        self.next_vc = counts(len(router.inputs))  # SA-I: per input port, where its VC search starts
        self.next_port = counts(len(router.outputs))  # SA-II: per output, where its port search starts
        self.ports = len(router.inputs)
        # This cycle's SA-I picks and SA-II bids, emptied by the cycle that makes them:
        self.picking = []  # the input ports that picked a VC, in the order of their first pick
        self.picked = [None] * len(router.inputs)  # per input port: its VC picked so far
        self.pick_out_vc = counts(len(router.inputs))  # its downstream VC (-1 - the VC chosen, for a head)
        self.wanted = [[] for _ in router.inputs]  # packet fidelity: per input port, the outputs its bidding VCs want
        self.bidding = []  # the outputs bid for, in the order of their first bid
        self.bid_by = counts(len(router.outputs))  # per output: input ports that bid for it
        self.bid_port = counts(len(router.outputs))  # per output: the bidding port first in turn

    def signature(self) -> tuple:
        return tuple(self.next_vc), tuple(self.next_port)

    def port_state(self, port) -> int:
        """The arbitration state of input port `port` alone (partitions.py): where its VC search starts."""
        return self.next_vc[port.index]

    def output_state(self, out) -> int:
        """The arbitration state of output unit `out` alone (partitions.py): where its port search starts."""
        return self.next_port[out.index]

    def allocate(self, cycle: int) -> int:
        """One cycle of switch allocation and traversal; returns when to step again (NEVER: only
        when woken)."""
        occupied = self.router.occupied
        if len(occupied) == 1:  # the usual case at low load: nothing to arbitrate
            return self._lone(occupied[0], cycle)
        wake_at = NEVER
        whole = self.whole_packets
        picked = self.picked  # (the counts arrays are read as self.x[i]: in the compiled build a local
        # alias of a typed array costs two atomic reference counts per call)
        for vc in occupied:
            port = vc.port
            if port.held_until >= cycle:  # fast-forwarded ahead with its partition (partitions.py)
                if port.held_until < wake_at:
                    wake_at = port.held_until + 1
                continue
            ready = vc.ready
            if not ready.count:  # mid-packet: its next flit is still upstream (its arrival wakes us)
                continue
            at = ready.front()
            if at <= vc.tail_left:  # a VC is a FIFO: its next packet leaves after the last one's tail (in flit
                # fidelity the port's busy_until already holds it back; packet fidelity shares the port's slots)
                at = vc.tail_left + 1
            if at <= cycle:
                at = port.next_free(cycle)  # a batch (or packets in packet fidelity) may be crossing
            if at > cycle:
                if at < wake_at:
                    wake_at = at
                continue
            p = port.index
            distance = (vc.index - self.next_vc[p]) % len(port.vcs)
            best = picked[p]
            best_distance = (best.index - self.next_vc[p]) % len(port.vcs) if best is not None else 0
            if best is not None and best_distance < distance and not whole:  # a VC first in turn bids here
                continue
            out = vc.out
            if out is None:
                out = self.route(vc)
            if vc.options is not None and vc.out_vc < 0:  # a head offered several routes
                at = self._choose(vc, cycle, vc.front.nflits if whole else 1)
                if at > cycle:
                    if at < wake_at:
                        wake_at = at
                    continue
                out = vc.out
            at = out.next_free(cycle)
            if at > cycle:
                if at < wake_at:
                    wake_at = at
                continue
            out_vc = vc.out_vc
            if out_vc < 0:  # a head: needs a free downstream VC with room for it
                room = vc.front.nflits if whole else 1
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
                self.wanted[p].append(out)
                if best is not None and best_distance < distance:
                    continue
            if best is None:
                self.picking.append(port)
            else:
                wake_at = cycle + 1  # the VC it displaces bids again next cycle
            picked[p] = vc
            self.pick_out_vc[p] = out_vc
        picking = self.picking
        if not picking:
            return wake_at
        ports, bidding = self.ports, self.bidding
        for port in picking:  # SA-II: per output, the picked port first in turn
            p = port.index
            o = picked[p].out.index
            if self.bid_by[o]:
                wake_at = cycle + 1  # the port that loses bids again next cycle
                rival = self.bid_port[o]
                if (p - self.next_port[o]) % ports < (rival - self.next_port[o]) % ports:
                    self.bid_port[o] = p
            else:
                bidding.append(o)
                self.bid_port[o] = p
            self.bid_by[o] += 1
        for o in bidding:
            p = self.bid_port[o]
            vc = picked[p]
            at = self._grant(vc, vc.out, self.pick_out_vc[p], cycle, self._waiting(vc.port) if whole else 1,
                             self.bid_by[o])
            if at < wake_at:
                wake_at = at
        for o in bidding:
            self.bid_by[o] = 0
        bidding.clear()
        self._clear_picks()
        return wake_at

    def _waiting(self, port) -> int:
        """Packet fidelity: the VCs at `port` that bid next cycle and win (those wanting an output
        nobody has bid for now), this cycle's winner included."""
        count = 1
        for out in self.wanted[port.index]:
            if not self.bid_by[out.index]:
                count += 1
        return count

    def _clear_picks(self) -> None:
        """Empty this cycle's SA-I picks (and the outputs the VCs of each port wanted)."""
        for port in self.picking:
            self.picked[port.index] = None
            if self.whole_packets:
                wanted = self.wanted[port.index]  # (clear() of a typed local is a C call compiled; of an
                wanted.clear()  # attribute or an item, looked up by name)
        picking = self.picking
        picking.clear()

    def _lone(self, vc: VirtualChannel, cycle: int) -> int:
        """SA-I and SA-II with `vc` the only VC of the router holding a packet."""
        port = vc.port
        if port.held_until >= cycle:  # fast-forwarded ahead with its partition (partitions.py)
            return port.held_until + 1
        ready = vc.ready
        if not ready.count:
            return NEVER
        out = vc.out
        if out is None:
            out = self.route(vc)
        if vc.options is not None and vc.out_vc < 0:  # a head offered several routes
            at = port.next_free(max(ready.front(), vc.tail_left + 1, cycle))
            if at <= cycle:
                at = self._choose(vc, cycle, vc.front.nflits if self.whole_packets else 1)
            if at > cycle:
                return at
            out = vc.out
        at = out.next_free(port.next_free(max(ready.front(), vc.tail_left + 1, cycle)))
        if at > cycle:
            return at
        out_vc = vc.out_vc
        if out_vc < 0:
            room = vc.front.nflits if self.whole_packets else 1
            out_vc = out.select_vc(vc.lo, vc.hi, cycle, room)
            if out_vc < 0:
                out.wait(cycle)
                return out.free_cycle(vc.lo, vc.hi, cycle, room, NEVER)
            out_vc = -1 - out_vc
        elif out.credits[out_vc] <= 0 and out.absorb(out_vc, cycle) <= 0:
            out.wait(cycle)
            return out.credit_cycle(out_vc, cycle)
        return self._grant(vc, out, out_vc, cycle, 1, 1)

    def _choose(self, vc: VirtualChannel, cycle: int, room: int) -> int:
        """A head offered several routes (a routing unit with `choices`) takes, at this attempt,
        the one whose output link is free and that has a free downstream VC with `room` credits,
        with the most free credits over its VCs (the first in the unit's order among equals), and
        returns `cycle`; if none has, it waits on them all and the first cycle one may is returned."""
        best, most = -1, -1
        options = vc.options
        for k in range(len(options)):
            out, lo, hi = options[k]
            if out.next_free(cycle) <= cycle and out.select_vc(lo, hi, cycle, room) >= 0:
                free = 0
                for v in range(lo, hi):
                    free += out.usable(v, cycle)
                if free > most:
                    best, most = k, free
        if best >= 0:
            out, lo, hi = options[best]
            vc.route_to(out, lo, hi)
            return cycle
        wake_at = NEVER
        for k in range(len(options)):
            out, lo, hi = options[k]
            at = out.next_free(cycle)
            if at <= cycle:
                out.wait(cycle)
                at = out.free_cycle(lo, hi, cycle, room, NEVER)
            if at < wake_at:
                wake_at = at
        return wake_at

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
        crossbar.traverse(self.router, vc, out, leaving)
        return port.next_free(cycle + 1) if port.occupied else NEVER
