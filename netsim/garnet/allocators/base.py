"""What every router model shares: route computation through the routing unit, the timing a model
gives a router's input ports, and how many flits of a granted packet may cross at once.

Timing, in the cycles a flit leaves a router ("departures"; a switch allocation decides the
departures of its own cycle): a flit that leaves upstream at cycle d arrives at d + link latency
(+ cycles per flit - 1) and may leave here at its ready cycle, `stage` cycles after it arrived; a
head may need more (the model's own pipeline stages). A credit is usable upstream from the cycle
after the flit leaves here plus the link latency (Garnet's and BookSim's credit path: sent at
switch allocation, one cycle on its link, used by the next allocation), one cycle sooner at a NIC,
which sends as soon as it holds the credit.

Batching: flit by flit, a granted VC wins again in the next cycle unless another VC contends for
its input port or output (a separable round-robin allocator then alternates). So a grant may move
the next k flits at once when none could: they are ready back to back, credits for them are held
or on their way in time, and no VC that might contend can bid before the last of them leaves. VCs
not visible yet (heads still upstream) cannot bid before `horizon` cycles from now: a head sent
upstream in this very cycle arrives after its link and still crosses this router's pipeline. The
round-robin pointers end where k single grants would leave them, so the results are the same
(tests compare with `batch=False`).

Route sets: a routing unit with `choices` (BookSim's adaptive routing functions) offers a head
several route entries at route computation (`VirtualChannel.options`); each model's VC allocation
takes one of them, whichever gets a downstream VC, at each attempt anew (`wait_for_vc` waits on
them all), and the packet keeps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from netsim.garnet.clock import NEVER
from netsim.garnet import crossbar  # (the module: the compiled modules import one another as they load)
from netsim.garnet.departures import Departures, evenly
from netsim.garnet.routing import table_output

if TYPE_CHECKING:  # (types only)
    from netsim.garnet.input_unit import VirtualChannel
    from netsim.garnet.output_unit import OutputUnit
    from netsim.garnet.packet import Packet
    from netsim.garnet.router import Router


# Beyond this many VCs holding packets in a router, batches are not tried: under load a contender
# nearly always bids within a cycle or two, and looking for the horizon costs more than it saves
# (batches never change results, only the work: tests/garnet/test_packet_mode.py compares batch=False).
BATCH_MAX_OCCUPIED = 2


class SwitchAllocator:
    """Base of the router models (`allocators/__init__.py` registers them by name)."""

    name: ClassVar[str] = ""
    eject_consume: ClassVar[int] = 0  # cycles a NIC takes to consume a flit before its credit goes back

    def __init__(self, router: Router, routing, whole_packets: bool, batch: bool):
        self.router = router
        self.node = router.node  # (one Python int, the key of every route table lookup here)
        self.routing = routing
        self.by_table = getattr(type(routing), "output", None) is table_output  # route by the message's table
        self.choices = routing.choices  # route computation offers several entries (module docstring)
        self.whole_packets = whole_packets  # packet fidelity: packets move as units
        self.batch = batch and not whole_packets
        # no VC that is not visible now can bid before this many cycles from now
        self.horizon = min((port.head_delay for port in router.inputs), default=NEVER)

    @staticmethod
    def stage(pipeline: int, router_latency: int) -> int:
        """Cycles from a flit's arrival to its ready cycle at a router of `pipeline` cycles (its
        `router_latency` plus a switch's own latency)."""
        return pipeline

    @classmethod
    def check(cls, router_latency: int) -> str:
        """Why this model cannot run with `router_latency` ('' if it can)."""
        return ""

    def allocate(self, cycle: int) -> int:
        """One cycle of the model's allocation and switch traversal; returns when to step again
        (NEVER: only when woken). Each model defines it."""
        raise NotImplementedError

    def route(self, vc: VirtualChannel) -> OutputUnit:
        """Route computation for `vc`'s front packet; returns its output unit (the first it is
        offered, for a unit with `choices`)."""
        if self.choices:
            vc.offer(self.routing.options(self.router, vc))
            return vc.out
        out, lo, hi = self.route_of(vc.front)
        vc.route_to(out, lo, hi)
        return out

    def wait_for_vc(self, vc: VirtualChannel, cycle: int, room: int) -> int:
        """`vc`'s head found no free downstream VC with `room` credits (0: any) on its route, or on
        any it is offered: wait on their outputs; returns the first cycle one may be free."""
        options = vc.options
        if options is None:
            vc.out.wait(cycle)
            return vc.out.free_cycle(vc.lo, vc.hi, cycle, room, NEVER)
        at = NEVER
        for out, lo, hi in options:
            out.wait(cycle)
            at = min(at, out.free_cycle(lo, hi, cycle, room, NEVER))
        return at

    def route_of(self, packet: Packet) -> tuple:
        """The routing unit's (output unit, lowest VC, VC bound) for `packet` here (a table lookup
        inline for a unit that routes by table: no Python call per head and hop)."""
        if self.by_table:
            return packet.route[self.node]
        return self.routing.output(self.router, packet)

    def wants(self, vc: VirtualChannel, out: OutputUnit) -> bool:
        """Might `vc` (holding packets) bid for output unit `out`?"""
        if vc.out is out or self.route_of(vc.front)[0] is out:
            return True
        for packet in vc.behind:
            if self.route_of(packet)[0] is out:
                return True
        return False

    def earliest_bid(self, vc: VirtualChannel, cycle: int) -> int:
        """A lower bound on the cycle `vc` (holding packets) may next win the switch: its front
        flit ready, its input port and output link free, and a credit (or, for a head, a free
        downstream VC) usable, as far as known; what is not known yet (a flit or credit not sent
        yet, a VC still held) cannot come sooner than the link and pipeline it must cross."""
        port = vc.port
        ready = vc.ready
        at = port.next_free(max(ready.front(), cycle) if ready.count else cycle + port.body_delay)  # (else its next flit is upstream)
        out = vc.out
        if out is None:
            out, lo, hi = self.route_of(vc.front)
        else:
            lo, hi = vc.lo, vc.hi
        at = out.next_free(at)
        unknown = cycle + out.credit_horizon
        if vc.out_vc >= 0:
            if out.absorb(vc.out_vc, cycle) <= 0:
                at = max(at, out.credit_cycle(vc.out_vc, cycle, 1, unknown))
        else:
            room = vc.front.nflits if self.whole_packets else 1
            if out.select_vc(lo, hi, cycle, room) < 0:
                at = max(at, out.free_cycle(lo, hi, cycle, room, cycle + 1))
        return at

    def leaving(self, vc: VirtualChannel, out: OutputUnit, first: int, now: int, share: int = 1) -> Departures:
        """The departures of the flits `vc` sends on its grant at cycle `first` (now, the cycle this
        router is stepped, or soon after it): in packet fidelity the whole packet, sharing its input
        and output with `share` packets in all (crossbar.py); else the batch of the module docstring
        (at least the granted flit)."""
        packet = vc.front
        remaining = packet.nflits - vc.sent
        cpf = out.cpf
        if self.whole_packets:
            out.absorb(vc.out_vc, now)  # (keeps the list of credits on their way short)
            port = vc.port
            cycles = crossbar.shared_departures(vc.ready, first, remaining, out, vc.out_vc, port, share)
            out.slots.take(cycles, now)
            port.slots.take(cycles, now)
            return cycles
        if remaining == 1 or not self.batch or len(self.router.occupied) > BATCH_MAX_OCCUPIED:
            return evenly(first, 1, cpf)  # (a busy router: contenders nearly always cut a batch short)
        limit = now + self.horizon  # departures must come before any possible contender's bid
        port = vc.port
        for other in self.router.occupied:
            if other is not vc and (other.port is port or self.wants(other, out)):
                at = self.earliest_bid(other, now)
                if at < limit:
                    limit = at
                    if limit <= first + cpf:
                        return evenly(first, 1, cpf)
        ready = vc.ready
        count = min(remaining, ready.count, (limit - first - 1) // cpf + 1)
        out_vc = vc.out_vc
        held = out.credits[out_vc]
        pending = out.pending[out_vc]
        k = 1
        while k < count:
            at = first + k * cpf
            if ready.at(k) > at or held + pending.count_until(at) <= k:
                break
            k += 1
        return evenly(first, k, cpf)
