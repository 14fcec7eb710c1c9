"""Switch traversal: flits granted by a switch allocator cross the crossbar from their input VC onto
an output unit's link (Garnet's CrossbarSwitch with the link traversal that follows it).

A grant may move several consecutive flits of one packet at once, each at its own departure cycle
(an allocator grants that only when flit-by-flit allocation could not have decided otherwise), or
a whole packet in packet fidelity.

In packet fidelity a packet is granted whole, but flit by flit a crossbar input and a link are
shared round robin by the packets that contend for them. So each crossbar input and link keeps the
cycles its packets in flight have taken (`Slots`): a packet takes the free ones, and one granted
while k-1 others bid for its input or output (to be granted in the next cycles) takes every k-th,
leaving them the rest, as flit-level round robin would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from netsim.garnet.departures import NONE, Departures, evenly, listed

if TYPE_CHECKING:  # (types only)
    from netsim.garnet.input_unit import VirtualChannel
    from netsim.garnet.output_unit import OutputUnit
    from netsim.garnet.router import Router

PRUNE_AT = 4096  # past cycles kept at the front of `taken` before they are dropped


class Slots:
    """The cycles at which flits of the packets in flight take a link or a crossbar input (packet
    fidelity), each for `width` cycles (a link's cycles per flit). While one packet's back-to-back
    flits are all there is (the usual case) they are kept as the even `Departures` they took, `run`
    (integers in the compiled build: a look costs no Python int); once another packet takes cycles
    before they are past, all of them go into `taken`, one byte per cycle from `base` on (1: a flit
    starts then), which the compiled build reads without a Python int (a set of cycles took half
    of a packet-level training run in hashing and allocating them)."""

    __slots__ = ("run", "taken", "base", "width", "clear_from")

    def __init__(self, width: int):
        self.run = NONE
        self.taken = bytearray()
        self.base = 0  # the cycle of taken[0]
        self.width = width
        self.clear_from = 0  # every cycle from this one on is free

    def free(self, cycle: int) -> bool:
        """May a flit start at `cycle`?"""
        return self._start_near(cycle) < 0

    def _start_near(self, cycle: int) -> int:
        """The latest flit start less than `width` cycles from `cycle`, either way (-1: none)."""
        run = self.run
        for at in range(cycle + self.width - 1, cycle - self.width, -1):
            if run.holds(at) or self._taken(at):
                return at
        return -1

    def _taken(self, cycle: int) -> bool:
        """Does a flit of `taken` start at `cycle`?"""
        i = cycle - self.base
        return 0 <= i < len(self.taken) and self.taken[i] == 1

    def next_free(self, cycle: int) -> int:
        """The first cycle at or after `cycle` a flit may start. A start `t` near `cycle` rules out
        every cycle up to `t + width`; back-to-back starts (of `run`, or of `taken` at one cycle per
        flit) are passed at once."""
        width = self.width
        while True:
            start = self._start_near(cycle)
            if start < 0:
                return cycle
            run = self.run
            if run.holds(start):  # with no free cycle between its flits, past the whole run
                cycle = run.last + width if run.spacing < 2 * width else start + width
            elif width == 1:  # the taken cycles from `start` on, all at once (a loop over the bytes:
                # compiled, a C loop, where bytearray.find is a Python call with its arguments parsed)
                taken = self.taken
                end = start - self.base
                while end < len(taken) and taken[end]:
                    end += 1
                cycle = self.base + end
            else:
                cycle = start + width

    def take(self, cycles: Departures, now: int) -> None:
        """A packet's flits take `cycles`, decided at cycle `now`: no flit decided from now on
        starts before it, nor asks whether one starts `width` cycles or more before it, so cycles
        taken that far back are dropped."""
        taken = self.taken
        if self.clear_from <= now:  # every cycle taken so far is past (the usual case)
            if taken:
                del taken[:]
            self.base = now
            if cycles.spacing:  # even
                self.run = cycles
            else:
                self.run = NONE
                self._mark(cycles)
        else:
            if self.run.count:
                self._mark(self.run)
                self.run = NONE
            past = now - self.width + 1 - self.base  # leading cycles no flit asks about any more
            if past > PRUNE_AT:
                del taken[:past]
                self.base += past
            self._mark(cycles)
        end = cycles.last + self.width
        if end > self.clear_from:
            self.clear_from = end

    def _mark(self, cycles: Departures) -> None:
        """Put `cycles` into `taken`."""
        if cycles.first < self.base:  # (never: a grant's flits leave at or after the cycle it is decided)
            raise ValueError(f"flits taking cycle {cycles.first}, before cycle {self.base} of the slots")
        taken = self.taken
        top = cycles.last - self.base + 1
        if top > len(taken):
            taken.extend(bytes(top - len(taken)))
        for k in range(cycles.count):
            taken[cycles.at(k) - self.base] = 1

    def signature(self, c: int) -> tuple:
        """The flit starts at or after cycle `c`, relative to it, as runs (first, count, spacing) in
        cycle order, each as long as it goes (a lone start's spacing 0): equal runs hold equal starts,
        found without a Python int per flit. (`take` never leaves both `run` and `taken` in use.)"""
        run = self.run
        if run.count:
            passed = 0 if c <= run.first else min(run.count, (c - run.first + run.spacing - 1) // run.spacing)
            left = run.count - passed
            first = run.first + passed * run.spacing - c
            return () if left == 0 else ((first, 1, 0),) if left == 1 else ((first, left, run.spacing),)
        runs = []
        taken, base = self.taken, self.base
        i = taken.find(1, max(c - base, 0))
        while i >= 0:
            j = taken.find(1, i + 1)
            if j < 0:
                runs.append((base + i - c, 1, 0))
                break
            spacing, count, last = j - i, 2, j
            j = taken.find(1, j + 1)
            while j >= 0 and j - last == spacing:
                count, last = count + 1, j
                j = taken.find(1, j + 1)
            runs.append((base + i - c, count, spacing))
            i = j
        return tuple(runs)

    def shift(self, span: int) -> None:
        self.run = self.run.shifted(span)
        self.base += span
        self.clear_from += span


def shared_departures(ready, first: int, count: int, out, out_vc: int, port, share: int) -> Departures:
    """Departures of a whole packet granted at `first` (packet fidelity) while `share` packets bid
    for its crossbar input or output: a flit at most every `share` slots of the link, each in a
    cycle free on both, once ready (`ready`: the ready cycles) and its credit is back (all on
    their way)."""
    link, crossbar = out.slots, port.slots
    if share == 1 and link.clear_from <= first and crossbar.clear_from <= first:
        return departures(ready, first, count, out, out_vc)  # nothing else crossing: the same cycles
    step = share * out.cpf
    held = out.credits[out_vc]
    pending = out.pending[out_vc]
    cycles = []
    at = first
    for k in range(count):
        if ready.at(k) > at:
            at = ready.at(k)
        if k >= held and pending.at(k - held) > at:
            at = pending.at(k - held)
        at = link.next_free(at)
        while not crossbar.free(at):  # the first cycle from `at` on free on both
            at = link.next_free(crossbar.next_free(at))
        cycles.append(at)
        at += step
    return listed(cycles)


def departures(ready, first: int, count: int, out, out_vc: int) -> Departures:
    """Cycles at which `count` flits leave through `out` into downstream VC `out_vc` if the first
    leaves at `first`: one every `cpf` cycles (the link's cycles per flit), later only where a flit
    is not ready yet (`ready`: their ready cycles, or None if all are) or its credit is not back
    yet (the credits are all on their way)."""
    spacing = out.cpf
    last = first + (count - 1) * spacing
    held = out.credits[out_vc]
    pending = out.pending[out_vc]
    if spacing == 1 and (ready is None or ready.at(count - 1) <= last) and (held >= count or pending.at(count - held - 1) <= last):
        # back to back (the usual case): flits arrive and credits return at least a cycle apart, so
        # if the last is in time, each one is
        return evenly(first, count, 1)
    cycles = []
    depart = first
    for k in range(count):
        at = ready.at(k) if ready is not None else first
        if k >= held and pending.at(k - held) > at:
            at = pending.at(k - held)
        if at > depart:
            depart = at
        cycles.append(depart)
        depart += spacing
    return listed(cycles)


def traverse(router: Router, vc: VirtualChannel, out: OutputUnit, leaving: Departures) -> bool:
    """The next flits of `vc`'s front packet leave through `out` at the cycles `leaving`; returns
    True if the packet's tail was among them."""
    packet = vc.front
    head = vc.sent == 0
    tail = vc.sent + leaving.count == packet.nflits
    out.send(packet, vc.out_vc, leaving, head, tail)
    vc.port.send_flits(vc, leaving)
    router.moved(leaving.last)
    return tail
