"""Output unit of a router or NIC (Garnet's OutputUnit with its OutVcState, BookSim's BufferState):
the link it drives and the upstream view of the input port at the link's far end: credits per
downstream VC, which VCs are held by a packet, credits on their way back, and which free VC the
next packet gets.

Credits travel lazily: when a flit leaves the downstream buffer, that input unit appends to
`pending` the cycle from which its credit may be used here (a sorted list per VC), and this unit
counts it once that cycle is reached (`absorb`). Only a blocked unit (`waiting`) has its owner
woken when a credit is returned, so credit returns cost no event of their own.

When is a downstream VC free for a new packet? Under tail-credit release (Garnet's, BookSim's
`wait_for_tail_credit`) once its last packet's tail has left and every credit is back; under
tail-sent release (BookSim's default) from the cycle after the tail left, full or not.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any

from netsim.garnet.clock import NEVER
from netsim.garnet.cycle_queue import CycleQueue
from netsim.garnet.departures import NONE
from netsim.garnet.tables import counts

if TYPE_CHECKING:  # (types only)
    from netsim.garnet.clock import CycleClock
    from netsim.garnet.input_unit import InputUnit, VirtualChannel
    from netsim.garnet.router import Router


class OutputUnit:
    """Serializes flits onto a link (one per `cpf` cycles) and keeps the downstream VC state."""

    __slots__ = ("owner", "clock", "name", "link_id", "cpf", "lat", "latency", "busy_until", "index",
                 "receiver", "eject_credit_delay", "credit_horizon", "dst_router", "dst_port", "dst_vcs", "delay", "depth",
                 "credits", "pending", "in_use", "tail_left", "last_sent", "release_on_sent", "next_vc", "waiting",
                 "stall_since", "stall", "flits", "bytes", "slots", "lookahead")

    def __init__(self, owner, clock: CycleClock, name: str, link_id: int, cycles_per_flit: int, latency: int,
                 release_on_sent: bool):
        self.owner = owner  # the router or NIC injector that sends on this unit (woken by credits)
        self.clock = clock
        self.name = name
        self.link_id = link_id  # row in the link report (-1: a NIC link)
        self.cpf = cycles_per_flit  # cycles the link is busy per flit
        self.latency = latency  # cycles of the link itself
        self.lat = latency + cycles_per_flit - 1  # cycles from a flit's departure to its (last bit's) arrival
        self.busy_until = 0  # first cycle the link may take another flit
        self.index = 0  # position among its owner's output units (set by Router.add_output)
        self.receiver: Any = None  # the NIC receiver of an ejection unit (None: feeds a router)
        self.eject_credit_delay = 0  # ejection: cycles from a flit's departure to its credit being usable
        self.credit_horizon = 1  # fewest cycles before a credit not yet sent back could be usable here
        self.dst_router: Router | None = None
        self.dst_port: InputUnit | None = None  # (None: an ejection unit, feeding `receiver`)
        self.dst_vcs: list[VirtualChannel] = []
        self.delay = 0  # cycles from a flit's departure to its ready cycle downstream
        self.depth = 0  # flits per downstream VC
        self.credits = counts(0)  # per VC: credits held (tables.py: typed in the compiled build)
        self.pending: list[CycleQueue] = []  # per VC: cycles from which returned credits may be used
        self.in_use = counts(0)  # per VC: 1 while held by a packet whose tail has not left
        self.tail_left = counts(0)  # per VC: cycle its last packet's tail left
        self.release_on_sent = release_on_sent
        self.next_vc = 0  # where the round-robin search for a free VC starts
        self.waiting = False  # the owner waits for a credit or a VC: wake it when one comes back
        self.stall_since = -1
        self.stall = 0  # cycles flits waited for credits or a VC
        self.flits = 0
        self.bytes = 0
        self.slots: Any = None  # packet fidelity on a router's link: the cycles its packets in flight take
        # packet fidelity under tail-sent release: a new packet may count the credits usable within
        # this many cycles, those already on their way back (see `select_vc`)
        self.lookahead = 0

    @property
    def ejects(self) -> bool:
        """Does this unit feed a NIC (an ejection port), not a router's input unit?"""
        return self.receiver is not None

    def next_free(self, cycle: int) -> int:
        """The first cycle at or after `cycle` the link may take a new flit."""
        at = self.busy_until if self.busy_until > cycle else cycle
        return at if self.slots is None else self.slots.next_free(at)

    def connect(self, port: InputUnit, delay: int, credit_delay: int, head_delay: int, stage: int) -> None:
        """Point this unit at input unit `port` of a router: a flit leaving here at cycle d is ready
        there at d + `delay`, and its credit is usable here `credit_delay` cycles after it leaves
        there; `head_delay` and `stage` are the port's (see InputUnit)."""
        self.dst_router = port.router
        self.dst_port = port
        self.dst_vcs = port.vcs
        self.delay = delay
        self._make_vcs(len(port.vcs), port.depth)
        self.credit_horizon = credit_delay
        port.upstream = self
        port.credit_delay = credit_delay
        port.body_delay = delay
        port.head_delay = head_delay
        port.stage = stage

    def connect_nic(self, receiver, vcs: int, depth: int, credit_delay: int) -> None:
        """Point this unit at NIC `receiver` (an ejection port with `vcs` VCs of `depth` flits): its
        credits are usable `credit_delay` cycles after a flit leaves here."""
        self.receiver = receiver
        self.eject_credit_delay = credit_delay
        self.credit_horizon = NEVER  # the NIC's credits are all known as soon as flits are sent
        self._make_vcs(vcs, depth)

    def _make_vcs(self, vcs: int, depth: int) -> None:
        self.depth = depth
        self.credits = counts(vcs, depth)
        self.pending = [CycleQueue() for _ in range(vcs)]
        self.in_use = counts(vcs)
        self.tail_left = counts(vcs, -NEVER)
        self.last_sent: list[Any] = [NONE] * vcs  # departures of the last flits sent into each VC (invariant checks)

    # ------------------------------------------------------------------ credits and VCs
    def absorb(self, vc: int, cycle: int) -> int:
        """Count the credits of `vc` usable by `cycle`; returns the credits now held."""
        pending = self.pending[vc]
        credits = self.credits[vc]
        if pending.count and pending.front() <= cycle:
            if pending.back() <= cycle:  # all of them (common after a whole packet): in bulk
                credits += pending.count
                pending.clear()
            else:  # some: `pending` is sorted, so count them by bisection
                arrived = pending.count_until(cycle)
                pending.drop(arrived)
                credits += arrived
            self.credits[vc] = credits
        return credits

    def usable(self, vc: int, cycle: int) -> int:
        """The credits of `vc` usable by `cycle` (a later cycle too: what is known now), without
        counting them in."""
        pending = self.pending[vc]
        if pending.count and pending.front() <= cycle:
            return self.credits[vc] + pending.count_until(cycle)
        return self.credits[vc]

    def is_free(self, vc: int, cycle: int) -> bool:
        """May a new packet take downstream `vc` at `cycle` (now, or later as far as known now)?
        (see the module docstring)"""
        if self.in_use[vc] or self.tail_left[vc] >= cycle:
            return False
        return self.release_on_sent or self.usable(vc, cycle) == self.depth

    def select_vc(self, lo: int, hi: int, cycle: int, room: int) -> int:
        """A free VC in [lo, hi) with at least `room` credits for a new packet at `cycle`: the one
        with the most, round robin among equals from the last one taken; -1 if none. Credits count
        if usable by then, or (tail-sent release) within `lookahead` cycles: in packet fidelity those
        whose flits left downstream before this cycle, on the credit link (a rule that does not
        depend on the order routers are stepped in within a cycle)."""
        best, best_credits = -1, room - 1
        span = hi - lo
        start = self.next_vc - lo if lo <= self.next_vc < hi else 0
        depth, on_sent = self.depth, self.release_on_sent
        by = cycle + self.lookahead
        for k in range(span):
            vc = lo + (start + k) % span
            if self.in_use[vc] or self.tail_left[vc] >= cycle:
                continue
            if not on_sent:  # tail-credit release: a free VC has all its credits, the first one will do
                if self.usable(vc, cycle) == depth:
                    return vc if depth >= room else -1
                continue
            credits = self.usable(vc, by)
            if credits > best_credits:
                if credits == depth:  # none has more: the first in turn with all its credits
                    return vc
                best, best_credits = vc, credits
        return best

    def claim(self, vc: int) -> None:
        """A packet takes downstream `vc`."""
        self.in_use[vc] = 1
        self.next_vc = vc + 1

    def free_cycle(self, lo: int, hi: int, cycle: int, room: int, unknown: int = NEVER) -> int:
        """The first cycle a VC in [lo, hi) will be free with `room` credits (usable, or within
        `lookahead`: see `select_vc`), as far as credits already on their way tell; where that depends on
        what is not known yet (credits not sent back yet, a VC still held by a packet), `unknown`
        (NEVER by default; a lower bound may pass the earliest such a thing could happen)."""
        earliest = NEVER
        for vc in range(lo, hi):
            pending = self.pending[vc]
            if self.in_use[vc]:
                at = unknown
            elif self.release_on_sent:
                at = self.tail_left[vc] + 1
                index = room - self.credits[vc] - 1
                if index >= pending.count:
                    at = unknown
                elif index >= 0:
                    at = max(at, pending.at(index) - self.lookahead)
            else:  # free once every credit is back
                at = pending.back() if pending.count and self.credits[vc] + pending.count == self.depth else unknown
            if at < earliest:
                earliest = at
        return max(earliest, cycle + 1)

    def credit_cycle(self, vc: int, cycle: int, count: int = 1, unknown: int = NEVER) -> int:
        """The first cycle `count` credits of `vc` will be usable (more than are by `cycle`), as far
        as credits on their way tell (else `unknown`). Held credits may be negative: a batch of
        flits may take credits that are already on their way, each by its flit's cycle."""
        pending = self.pending[vc]
        index = count - self.credits[vc] - 1
        return pending.at(index) if index < pending.count else unknown

    def wait(self, cycle: int) -> None:
        """The owner waits for a credit or a VC: it is woken when one comes back (and the cycles
        count as a credit stall)."""
        self.waiting = True
        if self.stall_since < 0:
            self.stall_since = cycle

    def credits_back(self, vc: int, departures, delay: int) -> None:
        """Flits that left downstream `vc` at `departures` return their credits, usable here
        `delay` cycles later (called by the downstream input unit)."""
        pending = self.pending[vc]
        pending.push_shifted(departures, delay)
        if self.waiting:
            self.waiting = False
            self.clock.wake(self.owner, departures.first + delay - self.lookahead)

    # ------------------------------------------------------------------ sending
    def send(self, packet, vc: int, departures, head: bool, tail: bool) -> None:
        """Flits of `packet` leave on the link at `departures` (at least `cpf` apart) into
        downstream `vc`, whose credits the caller has checked."""
        count = departures.count
        first, last = departures.first, departures.last
        if self.slots is None:  # (packets sharing the link take their own `slots`)
            self.busy_until = last + self.cpf
        self.flits += count
        if head:
            self.bytes += packet.nbytes
        if self.stall_since >= 0:
            self.stall += first - self.stall_since
            self.stall_since = -1
        self.credits[vc] -= count
        self.last_sent[vc] = departures
        port = self.dst_port
        if port is None:  # ejects: the NIC consumes every flit as it arrives and returns its credit
            pending = self.pending[vc]
            pending.push_shifted(departures, self.eject_credit_delay)
            if tail:
                self.receiver.arrive(packet, last + self.lat)
        else:
            delay = self.delay
            port.receive(self.dst_vcs[vc], packet, head, departures, delay)
            self.clock.wake(self.dst_router, first + delay)
        if tail:
            self.in_use[vc] = 0
            self.tail_left[vc] = last
            if self.release_on_sent and self.waiting:
                self.waiting = False
                self.clock.wake(self.owner, last + 1)

    def busy_after(self, now: float) -> float:
        """Cycles of this link's counted busy time (flits x cycles per flit) that lie after cycle
        `now` (only the last flits sent into each VC can leave later, as
        GarnetNetwork.check_flow_control assumes)."""
        ahead = 0.0
        cpf = self.cpf
        for departures in self.last_sent:
            for k in range(departures.count - 1, -1, -1):  # the latest first
                t = departures.at(k)
                if t + cpf <= now:
                    break
                ahead += min(cpf, t + cpf - now)
        return ahead

    # ------------------------------------------------------------------ fast-forward
    def signature(self, c: int) -> tuple:
        """The unit's state relative to cycle `c`. Credits usable by `c` count as held whether or
        not absorbed yet (units absorb lazily, when they need them, which is the same to every
        decision), so states that differ only in that compare equal."""
        credits, on_the_way, in_use, tail_left = [], [], [], []
        for vc in range(len(self.pending)):
            pending = self.pending[vc]
            arrived = pending.count_until(c)
            credits.append(self.credits[vc] + arrived)
            on_the_way.append(pending.relative(c, arrived))
            in_use.append(self.in_use[vc])
            tail_left.append(max(self.tail_left[vc] - c, -1))
        return (max(self.busy_until - c, 0), self.slots and self.slots.signature(c), tuple(credits),
                tuple(on_the_way), tuple(in_use), tuple(tail_left), self.next_vc, self.waiting,
                self.stall_since - c if self.stall_since >= 0 else None)

    def shift(self, span: int) -> None:
        self.busy_until += span
        if self.slots is not None:
            self.slots.shift(span)
        for pending in self.pending:
            pending.shift(span)
        for vc in range(len(self.tail_left)):
            self.tail_left[vc] += span
        self.last_sent = [sent.shifted(span) for sent in self.last_sent]
        if self.stall_since >= 0:
            self.stall_since += span

    def counter_fields(self):
        """(object, attribute) of the counters that grow linearly while the state repeats."""
        for name in ("stall", "flits", "bytes"):
            yield self, name


def link_counters(units: list, now: float, clock) -> tuple[array, array]:
    """Cumulative (bytes, busy ns) of output units `units` at cycle `now` (GarnetNetwork.link_counters),
    read in one pass in the core and packed as netsim.app.timeseries keeps samples (64-bit integers and
    floats): a 1024-NPU torus's 4,096 links sampled a few hundred times were a tenth of a 1 MiB
    all-reduce's time when each read was a Python call."""
    link_bytes = []
    busy = []
    for out in units:
        link_bytes.append(out.bytes)
        busy.append(clock.ns(out.flits * out.cpf - out.busy_after(now)))
    return array("q", link_bytes), array("d", busy)
