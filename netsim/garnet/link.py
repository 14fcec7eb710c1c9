"""Output port = a link plus the upstream view of the input port at its far end (BookSim's
BufferState): credits per downstream VC, which VCs are allocated, and credits on their way back.

Credits travel lazily: the downstream router appends the cycle a credit will arrive to `pending`
(a sorted list per VC), and the upstream side counts it once that cycle is reached. Only a blocked
port (`waiting`) asks for a wake-up when a credit is returned, so credit returns cost no event of
their own.
"""

from __future__ import annotations

from bisect import bisect_right

from netsim.garnet.clock import NEVER
from netsim.garnet.router import join


class OutputPort:
    """A router (or NIC) output: serializes flits onto a link and holds credits for the next VCs."""

    __slots__ = ("owner", "clock", "name", "link_id", "cpf", "lat", "busy_until", "eject", "receiver",
                 "dst_router", "dst_port", "dst_vcs", "delay", "depth", "credits", "pending", "allocated",
                 "tail_sent", "release_on_sent", "waiting", "stall_since", "stall", "flits", "bytes", "full",
                 "full_class")

    def __init__(self, owner, clock, name: str, link_id: int, cycles_per_flit: int, latency: int,
                 release_on_sent: bool):
        self.owner = owner  # the router or NIC injector that sends on this port (woken by credits)
        self.clock = clock
        self.name = name
        self.link_id = link_id  # row in the link report (-1: none)
        self.cpf = cycles_per_flit  # cycles the link is busy per flit
        self.lat = latency + cycles_per_flit - 1  # cycles from a flit's departure to its arrival
        self.busy_until = 0  # first cycle the link is free again
        self.eject = False  # True: ends at a NIC, which always accepts (no credits)
        self.receiver = None  # the NIC receiver of an ejection port
        self.dst_router = None
        self.dst_port = None
        self.dst_vcs: list = []
        self.delay = 0  # cycles from a flit's departure until it is ready downstream (link + pipeline)
        self.depth = 0  # flits per downstream VC
        self.credits: list[int] = []
        self.pending: list[list[int]] = []  # per VC: cycles at which returning credits arrive (sorted)
        self.allocated: list[bool] = []  # per VC: held by a packet
        self.tail_sent: list[bool] = []  # per VC: its packet's tail has left (tail-credit release)
        self.release_on_sent = release_on_sent
        self.waiting = False  # a flit here is blocked on credits or VCs: wake the owner on return
        # The last VC allocation that failed: its cycle and (lo, hi, room) (VC class and credits
        # asked for), so that other heads asking the same give up at once in that cycle. Two
        # fields: most heads pay only the compare of the cycle (an int).
        self.full = -1
        self.full_class = None
        self.stall_since = -1
        self.stall = 0  # cycles flits waited for credits or a VC
        self.flits = 0
        self.bytes = 0

    def connect(self, router, port) -> None:
        """Point this port at input `port` of `router` and take its credits."""
        self.dst_router = router
        self.dst_port = port
        self.dst_vcs = port.vcs
        self.delay = self.lat + router.pipeline
        self.depth = port.depth
        n = len(port.vcs)
        self.credits = [port.depth] * n
        self.pending = [[] for _ in range(n)]
        self.allocated = [False] * n
        self.tail_sent = [False] * n
        port.upstream = self

    def absorb(self, vc: int, cycle: int) -> int:
        """Count the credits of `vc` that have arrived by `cycle`; returns the credits now held."""
        pending = self.pending[vc]
        credits = self.credits[vc]
        if pending and pending[-1] <= cycle:  # all of them (common after a whole packet): in bulk
            credits += len(pending)
            pending.clear()
        elif pending and pending[0] <= cycle:  # some: `pending` is sorted, so count them by bisection
            arrived = bisect_right(pending, cycle)
            del pending[:arrived]
            credits += arrived
        self.credits[vc] = credits
        return credits

    def allocate(self, lo: int, hi: int, cycle: int, room: int) -> int:
        """Claim the first free downstream VC in [lo, hi) with `room` credits (atomic allocation: one
        packet per VC); -1 if there is none. Packet fidelity asks for room for the whole packet, as
        virtual cut-through allocates; flit fidelity for none (a flit waits for its credit). Only
        under tail-sent release can a free VC lack room: it may still hold its last packet's flits."""
        allocated = self.allocated
        for vc in range(lo, hi):
            if not allocated[vc] or (self.tail_sent[vc] and self.absorb(vc, cycle) == self.depth):
                if room and self.credits[vc] < room and self.absorb(vc, cycle) < room:
                    continue
                allocated[vc] = True
                self.tail_sent[vc] = False
                return vc
        return -1

    def _stalled(self, cycle: int) -> None:
        self.waiting = True
        if self.stall_since < 0:
            self.stall_since = cycle

    def wait_credit(self, vc: int, cycle: int, missing: int = 1) -> int:
        """Flits wait for `missing` more credits of `vc` than have arrived by `cycle`: when they will have."""
        self._stalled(cycle)
        pending = self.pending[vc]
        return pending[missing - 1] if len(pending) >= missing else NEVER

    def wait_vc(self, lo: int, hi: int, cycle: int, room: int) -> int:
        """A head waits for a VC in [lo, hi) with `room` credits: the first cycle one will be free
        with them, as far as credits already on their way tell; NEVER if none (`waiting` then has
        the owner woken by the next credit sent back or, under tail-sent release, VC released)."""
        self._stalled(cycle)
        earliest = NEVER
        for vc in range(lo, hi):
            pending = self.pending[vc]
            if self.tail_sent[vc]:  # tail-credit release: free once its last credit is back
                at = pending[-1] if pending else NEVER
            elif not self.allocated[vc]:  # tail-sent release: free, but short of room (`allocate` absorbed)
                missing = room - self.credits[vc]
                at = pending[missing - 1] if 0 < missing <= len(pending) else NEVER
            else:
                continue
            if at < earliest:
                earliest = at
        return earliest

    def release(self, vc: int, cycle: int) -> None:
        """The tail of `vc`'s packet has been sent: free the VC now (tail-sent) or on its credit."""
        if self.release_on_sent:
            self.allocated[vc] = False
            self.full = -1
            if self.waiting:
                self.waiting = False
                self.clock.wake(self.owner, cycle + 1)
        else:
            self.tail_sent[vc] = True

    def forward(self, packet, vc: int, head: bool, tail: bool, cycle: int) -> None:
        """Send one flit of `packet` into downstream `vc` at `cycle` (credit already checked)."""
        self.busy_until = cycle + self.cpf
        self.flits += 1
        if self.stall_since >= 0:
            self.stall += cycle - self.stall_since
            self.stall_since = -1
        if head:
            self.bytes += packet.nbytes
        if self.eject:
            if tail:
                self.receiver.arrive(packet, cycle + self.lat)
            return
        self.credits[vc] -= 1
        buffer = self.dst_vcs[vc]
        ready = buffer.ready
        router = self.dst_router
        joins = not ready and not buffer.sent  # else it is mid-packet and keeps its turn
        at = cycle + self.delay
        ready.append(at)
        if joins:
            join(router, buffer)
        if head:
            buffer.packets.append(packet)
        if len(ready) > buffer.peak:
            buffer.peak = len(ready)
        self.clock.wake(router, at)
        if tail:
            self.release(vc, cycle)

    def forward_packet(self, packet, vc: int, first: int, departures: list | None = None) -> None:
        """Send all flits of `packet` into downstream `vc` at once: back to back from cycle `first`
        (one every `cpf` cycles), or flit k at `departures[k]` (increasing, at least `cpf` apart)
        when the flits could not leave back to back. Credits for all of them are already checked.

        The trick that makes unobstructed packets cheap: the downstream buffer gets every flit's
        ready-cycle now (a buffer already holds flits still on the wire), the link is reserved up
        to the tail, and the downstream router is woken once, for the head.
        """
        nflits = packet.nflits
        cpf = self.cpf
        last = first + (nflits - 1) * cpf if departures is None else departures[-1]
        self.busy_until = last + cpf
        self.flits += nflits
        self.bytes += packet.nbytes
        if self.stall_since >= 0:
            self.stall += first - self.stall_since
            self.stall_since = -1
        if self.eject:
            self.receiver.arrive(packet, last + self.lat)
            return
        self.credits[vc] -= nflits
        buffer = self.dst_vcs[vc]
        ready = buffer.ready
        joins = not ready
        delay = self.delay
        if departures is None:
            ready.extend(range(first + delay, last + delay + 1, cpf))
        else:
            ready.extend([cycle + delay for cycle in departures])
        if joins:
            joining = self.dst_router.joining
            if joining:
                join(self.dst_router, buffer)
            else:  # `join`'s own first case, inline on this hot path: nothing else on its way there
                joining.append(buffer)
        buffer.packets.append(packet)
        if len(ready) > buffer.peak:
            buffer.peak = len(ready)
        self.clock.wake(self.dst_router, first + delay)
        if self.release_on_sent:
            self.release(vc, last)
        else:  # tail-credit release (what `release` does), inline on this hot path
            self.tail_sent[vc] = True

    def credit(self, vc: int, cycle: int) -> None:
        """A credit for `vc` will arrive here at `cycle`."""
        self.pending[vc].append(cycle)
        if self.waiting:
            self.waiting = False
            self.clock.wake(self.owner, cycle)
