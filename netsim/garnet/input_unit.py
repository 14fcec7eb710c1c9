"""Input unit of a router (Garnet's InputUnit, BookSim's Buffer): the virtual-channel buffers of one
input port, the flits and packets they hold, and the credits they return upstream.

Flits are not objects. A VC keeps, per flit, the cycle it may leave this router at the earliest
(its `ready` cycle, which the sending output unit computed from its link and this router's
pipeline) and the packets those flits belong to. Flits still on the wire are already in `ready`
(with a future cycle): the sender writes them when it sends, so a router can see what is coming.
The flit at the front of a VC is its packet's head when the VC has sent none of the packet yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from netsim.garnet.clock import NEVER
from netsim.garnet.cycle_queue import CycleQueue

if TYPE_CHECKING:  # (types only)
    from netsim.garnet.router import Router


class VirtualChannel:
    """One VC buffer. Its front packet's route (`out`, VC range `lo`..`hi`) is filled in when the
    head reaches the front and is routed; `out_vc` when a downstream VC is allocated to it. A
    routing unit with `choices` offers several routes (`options`): `out`..`hi` hold the first until
    VC allocation takes one."""

    __slots__ = ("port", "index", "rank", "ready", "front", "behind", "sent", "out", "lo", "hi", "options", "out_vc",
                 "head_from", "tail_left", "peak", "popped_in", "popped", "residency")

    def __init__(self, port: "InputUnit", index: int, depth: int):
        self.port = port
        self.index = index
        self.rank = index  # position among all VCs of its router (allocators' round-robin order)
        self.ready = CycleQueue()  # per flit (front first): earliest cycle it may leave
        self.front: Any = None  # the packet whose flits leave next (None: the VC is empty)
        # the packets after it with flits here or on the way, in order (only under tail-sent
        # release, where a VC is a FIFO: usually none, so a packet that comes and goes costs no list)
        self.behind: list = []
        self.sent = 0  # flits of the front packet already sent on
        self.out: Any = None  # OutputUnit of the front packet (None: not routed yet)
        self.lo = self.hi = 0  # downstream VCs [lo, hi) its class may take
        self.options: Any = None  # the route entries (output unit, lo, hi) it may take (None: only out)
        self.out_vc = -1  # downstream VC allocated to the front packet
        self.head_from = 0  # the allocator's own gate for the front head (a pipeline stage's cycle)
        self.tail_left = -NEVER  # cycle the last packet's tail left this VC
        self.peak = 0  # most flits held or on the wire towards it (credits in use)
        self.popped_in = -NEVER  # the last cycle flits were sent on from here (their credits still in use then)
        self.popped = 0  # how many were in that cycle
        self.residency = 0  # flit-cycles spent in this buffer (mean occupancy = residency / cycles)



    def signature(self, c: int, name) -> tuple | None:
        """The VC's state relative to cycle `c` (fast-forward; `name(packet)` names a packet); None
        when it is empty and idle. Cycles in the past only mean "already": clamped."""
        if self.front is None:
            return None
        return (self.ready.relative(c, 0), tuple(map(name, (self.front, *self.behind))), self.sent,
                id(self.out), self.lo, self.hi, self.out_vc, max(self.head_from - c, 0), max(self.tail_left - c, -1))

    def shift(self, span: int) -> None:
        """Move every stored cycle `span` later (fast-forward)."""
        self.ready.shift(span)
        self.head_from += span
        self.tail_left += span

    def route_to(self, out, lo: int, hi: int) -> None:
        """Route computation done for the front packet: output unit `out`, downstream VCs [lo, hi)."""
        self.out = out
        self.lo = lo
        self.hi = hi

    def offer(self, options: tuple) -> None:
        """Route computation done for the front packet with several route entries to choose from
        at VC allocation (`route_to` the one taken)."""
        self.options = options
        self.out, self.lo, self.hi = options[0]

    def grant(self, out_vc: int) -> None:
        """Downstream VC `out_vc` is allocated to the front packet."""
        self.out_vc = out_vc

    def gate(self, cycle: int) -> None:
        """The allocator's next stage for the front head may not run before `cycle`."""
        self.head_from = cycle


class InputUnit:
    """An input port: `vcs` buffers of `depth` flits, fed by `upstream` (an OutputUnit of a router
    or NIC), to which it returns one credit per flit that leaves."""

    __slots__ = ("router", "name", "vcs", "depth", "upstream", "credit_delay", "busy_until", "link_id",
                 "index", "occupied", "head_delay", "body_delay", "stage", "slots", "held_until")

    def __init__(self, router: Router, name: str, vcs: int, depth: int, link_id: int):
        self.router = router
        self.name = name
        self.vcs = [VirtualChannel(self, v, depth) for v in range(vcs)]
        self.depth = depth
        self.upstream: Any = None  # the OutputUnit feeding this port (set by OutputUnit.connect)
        # set by OutputUnit.connect from the link and the router model:
        self.credit_delay = 1  # cycles from a flit leaving here to its credit being usable upstream
        self.head_delay = 1  # fewest cycles from a head's departure upstream to when it may leave here
        self.body_delay = 1  # cycles from a flit's departure upstream to its ready cycle here
        self.stage = 0  # cycles from a flit's arrival here to its ready cycle (residency accounting)
        self.busy_until = 0  # first cycle this port may send a flit through the crossbar again
        self.link_id = link_id
        self.index = 0  # position among its router's input ports (set by Router.add_input)
        self.occupied = 0  # VCs holding a packet
        self.slots: Any = None  # packet fidelity: the cycles its packets in flight take the crossbar input
        # fast-forwarded with its partition (partitions.py): its VCs hold the state of the end of this
        # cycle, which the clock has not reached; allocators leave them alone until after it
        self.held_until = -1

    def next_free(self, cycle: int) -> int:
        """The first cycle at or after `cycle` this port may send a flit through the crossbar."""
        at = self.busy_until if self.busy_until > cycle else cycle
        return at if self.slots is None else self.slots.next_free(at)

    @property
    def residency(self) -> int:
        """Flit-cycles spent in this port's buffers (mean occupancy = residency / cycles)."""
        return sum(vc.residency for vc in self.vcs)

    def receive(self, vc: VirtualChannel, packet, head: bool, departures, delay: int) -> None:
        """Flits of `packet` enter `vc`, sent by the upstream output unit at `departures`, each
        ready here `delay` cycles later. A head that finds the VC empty makes it
        occupied: the router is told."""
        ready = vc.ready
        ready.push_shifted(departures, delay)
        if head:
            if vc.front is None:
                vc.front = packet
                self.occupied += 1
                self.router.occupy(vc)
            else:
                vc.behind.append(packet)
        count = ready.count
        if vc.popped_in == self.router.clock.cycle:  # sent on this cycle before these came: their credits
            count += vc.popped  # are still in use, as if this router had stepped after the sender
        if count > vc.peak:
            vc.peak = count

    def send_flits(self, vc: VirtualChannel, departures) -> bool:
        """Flits leave the front of `vc` at `departures`; their credits go back upstream. Returns
        True if that was the front packet's tail (the VC moves to its next packet, or becomes
        empty)."""
        ready = vc.ready
        count = departures.count
        last = departures.last
        cycle = self.router.clock.cycle
        if vc.popped_in == cycle:
            vc.popped += count
        else:
            vc.popped_in = cycle
            vc.popped = count
        if count == 1:
            vc.residency += last - ready.pop() + self.stage
        else:
            waited = ready.pop_sum(count)
            vc.residency += departures.total() - waited + count * self.stage
        self.upstream.credits_back(vc.index, departures, self.credit_delay)
        if self.slots is None and last >= self.busy_until:  # (packets sharing the input take `slots`)
            self.busy_until = last + 1
        sent = vc.sent + count
        if sent < vc.front.nflits:
            vc.sent = sent
            return False
        vc.front = vc.behind.pop(0) if vc.behind else None
        vc.sent = 0
        vc.out = None
        vc.options = None
        vc.out_vc = -1
        vc.tail_left = last
        if vc.front is None:
            self.occupied -= 1
            self.router.vacate(vc)
        return True

    def signature(self, c: int, name) -> tuple:
        """The port's state relative to cycle `c` (fast-forward)."""
        return (max(self.busy_until - c, 0), self.slots and self.slots.signature(c),
                tuple([vc.signature(c, name) for vc in self.vcs]))

    def in_flight(self, into: dict) -> None:
        """Add the packets in its VCs to `into` (id -> packet): a partition skip shifts them."""
        for vc in self.vcs:
            if vc.front is not None:
                into[id(vc.front)] = vc.front
                for packet in vc.behind:
                    into[id(packet)] = packet

    def hold(self, until: int) -> None:
        """Fast-forwarded ahead of the clock, to the end of cycle `until` (partitions.py)."""
        self.held_until = until

    def shift(self, span: int) -> None:
        self.busy_until += span
        if self.slots is not None:
            self.slots.shift(span)
        for vc in self.vcs:
            vc.shift(span)

    def counter_fields(self):
        """(object, attribute) of the counters that grow linearly while the state repeats."""
        for vc in self.vcs:
            yield vc, "residency"
