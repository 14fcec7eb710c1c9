"""Fast-forward per partition: groups of messages that share no port find and skip their own repeats.

The whole-network fast-forward (fastforward.py) needs every buffer of the network to repeat at
once, between two changes of traffic anywhere. On a large torus that rarely happens: a 1 GiB
all-reduce on 16x16x16 runs messages of 160, 10 and 1 packets in its three dimensions at once, and
some message starts or ends every few dozen cycles. But messages that share no port do not interact:
a router's allocators keep their round-robin state per input port and per output
(`SwitchAllocator.port_state`), a VC, a credit or a link belongs to one port, and a router re-derives
from its ports' state when to step next. So the network splits into partitions:

- a partition is the set of active messages (from their first packet cut to their last tail's
  arrival) linked by sharing a port, with the ports they use: NIC injection and ejection ports and
  router input and output units. A message's first cut joins the partitions its route touches; a
  delivery leaves its partition to be regrouped (only when it is next probed: a partition that is
  too large is still independent of the rest, only less often periodic);
- each partition probes for a repeat of its own ports' state as the whole network does (at cuts of
  its pilot injection port; sketch first, full signature at one phase), and when its state at the
  end of cycle c matches the one at cycle c - P, it skips K whole periods: every cycle stored in its
  ports moves K * P later (so its ports sit idle until then, routers stepping them only for other
  partitions' sake), its linear counters grow by K times their growth over the period, and its
  packets' statistics get the arrivals of K more periods. K is bounded so that each of its
  messages keeps a whole packet (and its last) to cut, and by the end of the current run;
- the state its repeat was found in, or the one a skip reached, is its seed (`Partition.reseed`):
  while its traffic stays as it is, it is in that state again at every phase of the period, so a
  skip cut short by another message's delivery is followed by the next one a period later, and
  its next probes come at that phase alone, take the seed's signature as it is (collecting only
  the packets to shift; built and compared where the network checks invariants), and stop at once
  while not one period fits (a repeat then found a multiple of the period on skips by the period
  itself: `_one_period`).

A partition's ports then hold the state of a later cycle than the clock's: nothing outside it may
touch them until the clock gets there. Messages queued behind one of its messages at its injection
port wait there anyway; other new messages are started by the system layer, on a simpy event or
on a delivery, so a skip ends before the next simpy event and before the earliest cycle any message
outside the partition may be delivered (its packets at line rate from its first cut). Should a
message still start (cut its first packet) on a route through such a port earlier, it raises
`PartitionConflict`, and the run is simulated again with the whole-network fast-forward
(netsim.app.runner). The results are those of stepping every cycle (tests compare with
fast-forward off); the component-step count (`events`) is not, nor, between a skip and the cycle it
reaches, the partition's links' counters a monitor samples (they grow at the skip). Routers step for
every partition they serve: an input unit moved ahead says so (`InputUnit.held_until`) and
allocators leave its VCs alone until the clock gets there.

Probing costs a walk over the partition's ports, so only messages with packets enough left for a
skip to pay for it are probed (`SKIP_WORTH`), and the module is part of the compiled core: one
Python call per packet cut and arrived is what a message pays that never repeats.
"""

from __future__ import annotations

from heapq import heappop, heappush, heapreplace

from netsim.errors import InvariantError, PartitionConflict
from netsim.garnet.clock import NEVER, relative
from netsim.garnet.shortcuts.fastforward import (MAX_PROBES, Snapshot, add_latencies, periods_before_last_cut,
                                                 periods_until, repeat_of, sketch_matches)
from netsim.garnet.input_unit import InputUnit
from netsim.garnet.nic import Injector
from netsim.garnet.output_unit import OutputUnit
from netsim.garnet.routing import HOPS

# packets a skip should cover at least, beyond finding its period, for the signatures to pay
# (8x8x8 torus, 256 MiB packet all-reduce: its 10-packet messages cost probes and never skipped)
SKIP_WORTH = 16


class Partition:
    """Active messages linked by the ports they share, those ports, and the partition's probes."""

    __slots__ = ("messages", "units", "inputs", "outputs", "injectors", "receivers", "born", "ahead_until", "stale",
                 "queued", "pilot", "probes", "sketches", "reference", "seen", "arrivals", "period",
                 "seed", "seed_counters", "seeded", "unsent_deltas", "fields")

    def __init__(self, born: int):
        self.messages: dict = {}  # its messages (keys; values None), in the order they started
        self.units: set = set()  # its ports, listed by kind below in the order first used
        self.inputs: list = []  # router input units
        self.outputs: list = []  # router output units
        self.injectors: list = []  # NIC injection ports (each with its link's output unit)
        self.receivers: list = []  # NIC ejection ports
        self.born = born  # the cycle it was made in (its lifetime is a figure of the benchmark)
        self.ahead_until = -1  # its ports hold the state of the end of this cycle (a skip); -1: none
        self.stale = False  # a message left: regroup before the next probe
        self.queued = False  # in PartitionForward.due (a flag: a list's `in` compared every entry)
        self.pilot = None  # the injection port whose cuts mark probe points (None: the next to cut)
        self._forget()

    def forget(self) -> None:
        """Its traffic changed: forget its probes (nothing to do if none was due since the last time, as
        for most messages, too short to be probed)."""
        if self.pilot is not None:
            self.pilot = None
            self._forget()

    def _forget(self) -> None:
        """The state of no probe taken."""
        self.probes = 0
        self.sketches: set = set()
        self.reference = None  # the first sketch seen twice: full signatures only there
        self.seen: dict = {}  # signature -> (cycle, counters, arrivals logged then)
        self.arrivals: list = []  # (latency, packet) of arrivals since the first full signature
        self.period = 0  # the period its seed state was found to repeat with (0: none yet)
        self.seed = None  # its seed state's signature, counters and cycle (`reseed`)
        self.seed_counters = None
        self.seeded = 0
        self.unsent_deltas = None  # its messages' unsent bytes' growth over that period
        self.fields = None  # (`counter_fields`)

    def reseed(self, signature: tuple, cycle: int, counters: list) -> None:
        """Its state at the end of `cycle`, found to repeat every `self.period` cycles, is `signature` with
        `counters` (after a skip, where the skip reached): its seed, the state it is in again at every
        phase of the period while its traffic stays as it is, where its next probes come."""
        self.seen = {}
        self.seed = signature
        self.seed_counters = counters
        self.seeded = cycle
        self.arrivals = []

    def counter_fields(self) -> list:
        """(object, attribute) of every counter that grows linearly while its state repeats, in a fixed
        order, its messages' unsent bytes last (PartitionState's; kept until its traffic changes)."""
        if self.fields is None:
            fields = []
            for port in self.inputs:
                fields.extend(port.counter_fields())
            for out in self.outputs:
                fields.extend(out.counter_fields())
            for injector in self.injectors:
                fields.extend(injector.out.counter_fields())
            for message in self.messages:
                fields.append((message, "unsent"))
            self.fields = fields
        return self.fields

    def add(self, message, units: tuple) -> None:
        """`message` joins, with its ports (route_units)."""
        self.messages[message] = None
        for unit in units:
            if unit not in self.units:
                self.units.add(unit)
                if isinstance(unit, InputUnit):
                    self.inputs.append(unit)
                elif isinstance(unit, OutputUnit):
                    self.outputs.append(unit)
                elif isinstance(unit, Injector):
                    self.injectors.append(unit)
                else:
                    self.receivers.append(unit)


def _delivered(message) -> bool:
    """Has every packet of `message` been cut and arrived?"""
    return message.packets_out == 0 and message.unsent == 0


def route_units(route: tuple) -> tuple:
    """The ports a message on `route` (RouteTables.route) uses, in its order: its injection port, then
    per router the input unit it enters by and the output unit it leaves by, and the ejection port it
    ends at."""
    table, _hops, _nic, injector, _dims = route
    units = [injector, injector.out.dst_port]
    for out, _lo, _hi in table.values():
        units.append(out)
        units.append(out.receiver if out.dst_port is None else out.dst_port)
    return tuple(units)


class PartitionForward:
    """Partitions of the active messages and their fast-forward (see the module docstring); the same
    calls from the NICs as FastForward's."""

    def __init__(self, network):
        self.network = network
        self.clock = network.clock
        self.stats = network.packet_stats
        self.skipped_cycles = 0  # partition-cycles skipped (summed over partitions)
        self.skips = 0
        self.partitions_found = 0  # partitions made (at a first cut or a regrouping)
        self.lived = 0  # partition-cycles of the partitions that are no more (`partition_cycles`)
        self.of_unit: dict = {}  # port -> its partition
        self.of_message: dict = {}  # message -> its partition
        self.units_of: dict = {}  # id(route) -> route_units(route)
        self.routes: dict = {}  # (keeps the routes of `units_of` alive)
        self.due: list = []  # partitions to probe at the end of this cycle
        self.loose: dict = {}  # active message not grouped yet -> (cycle of its first cut, its order) (`_start`)
        # heap of (earliest cycle it may be delivered, order, message) of the active messages (`_horizon`)
        self.deliveries: list = []
        self.started = 0  # messages started (the heap's tie-break)
        self.flit_bytes = network.flit_bytes
        # a message is probed while it has packets enough left for a period of a packet per VC of a port,
        # twice to find it, one to skip, and SKIP_WORTH more (FastForward.packets_to_probe)
        vcs = max((len(port.vcs) for router in network.routers for port in router.inputs), default=1)
        self.packets_to_probe = 2 * vcs + 1 + SKIP_WORTH

    # ------------------------------------------------------------------ calls from the NICs
    def changed(self, message) -> None:
        """Something not part of a steady state happened to `message` (its last cut, the hand-off of its
        last flit, its delivery; None: a new message, which counts from its first cut): its partition
        forgets its probes; a delivered message leaves it."""
        if message is None:
            return
        partition = self.of_message.get(message)
        delivered = _delivered(message)
        if partition is None:
            if message in self.loose:
                if delivered:
                    del self.loose[message]
                return
            if delivered:  # (its last flit handed off after its delivery)
                return
            partition = self._start(message)  # a one-packet message: its only cut is its last
            if partition is None:
                return
        partition.forget()
        if delivered:
            self._leave(partition, message)

    def cut(self, injector, message) -> None:
        """Injection port `injector` cut a (not last) packet of `message`: maybe a probe point."""
        partition = self.of_message.get(message)
        if partition is None:
            if message in self.loose:
                return
            partition = self._start(message)
            if partition is None:
                return
        if message.unsent < self.packets_to_probe * message.packet_bytes:
            return
        if partition.pilot is None:
            partition.pilot = injector
        if injector is partition.pilot and partition.probes < MAX_PROBES:
            if partition.period and (self.clock.cycle - partition.seeded) % partition.period:
                return  # (its state is known to repeat, at this phase of its period alone)
            if not self.due:
                self.clock.hook_at = 0  # probe at the end of this cycle (`after_cycle`)
            if not partition.queued:
                partition.queued = True
                self.due.append(partition)

    def arrived(self, packet, latency: int) -> None:
        """`packet` arrived with `latency`: logged by its partition while it waits for a match."""
        partition = self.of_message.get(packet.msg)
        if partition is not None and (partition.seen or partition.period) and partition.probes < MAX_PROBES:
            partition.arrivals.append((latency, packet))

    def reset(self) -> None:
        """(FastForward's: nothing network-wide to forget here)"""

    # ------------------------------------------------------------------ partitions
    def _units(self, message) -> tuple:
        route = message.route
        units = self.units_of.get(id(route))
        if units is None:
            units = self.units_of[id(route)] = route_units(route)
            self.routes[id(route)] = route
        return units

    def _start(self, message) -> Partition | None:
        """`message` cuts its first packet: it joins the partitions its route touches, which merge. While
        no message that could be probed is active, others are only noted (`loose`), which saves the
        grouping where no skip could come of it (a 64 MiB all-reduce on a fat-tree of 64 NPUs: 3-packet
        messages, the grouping 20% of the run), and their earliest deliveries, which only skips read (a
        heap of every message a 1024-NPU all-reduce of one-packet messages ever sent: a sixth of its
        run); the first that could be probed groups them all first."""
        cycle, order = self.clock.cycle, self.started
        self.started += 1
        if not self.of_message:
            if message.nbytes < self.packets_to_probe * message.packet_bytes:
                self.loose[message] = (cycle, order)
                return None
            loose = self.loose
            self.loose = {}
            for other, (first_cut, other_order) in loose.items():
                self._note_delivery(other, first_cut, other_order)
                self._group(other)
        self._note_delivery(message, cycle, order)
        return self._group(message)

    def _note_delivery(self, message, first_cut: int, order: int) -> None:
        """Note the earliest cycle `message`, which cut its first packet at `first_cut` (the `order`-th
        message to), may be delivered: its packets but the last cross its injection link whole first, a
        flit per `cpf` cycles at best. (Delivered messages leave the heap as they come to its top, here
        and in `_horizon`.)"""
        deliveries = self.deliveries
        while deliveries and _delivered(deliveries[0][2]):
            heappop(deliveries)
        packets = -(-message.nbytes // message.packet_bytes)
        earliest = first_cut + (packets - 1) * self._packet_cycles(message)
        heappush(deliveries, (earliest, order, message))

    def _packet_cycles(self, message) -> int:
        """Cycles a whole packet of `message` takes on its injection link at the least."""
        return -(-message.packet_bytes // self.flit_bytes) * message.route[3].out.cpf

    def _earliest_delivery(self, message, cycle: int) -> int:
        """A lower bound, at the end of `cycle`, of the cycle `message` (active) may be delivered in, from
        what it has left to cut: its next cut comes after this cycle (after the one its partition's ports
        are ahead to), its packets but the last at line rate."""
        packets = -(-message.unsent // message.packet_bytes)
        if packets == 0:
            return cycle + 1
        partition = self.of_message.get(message)
        if partition is not None and partition.ahead_until > cycle:
            cycle = partition.ahead_until
        return cycle + 1 + (packets - 1) * self._packet_cycles(message)

    def _horizon(self, partition: Partition, cycle: int) -> int:
        """The earliest cycle a message outside `partition` may be delivered (NEVER: none is active), at
        the end of `cycle`. A delivery may start new messages at once, through the partition's ports for
        all we know: a skip stays before it, so that no message meets ports ahead of the clock
        (`PartitionConflict`). A bound noted at a message's first cut is raised, when it comes to the
        heap's top, to what the message has left to cut (`_earliest_delivery`)."""
        deliveries = self.deliveries
        own = []
        horizon = NEVER
        while deliveries:
            earliest, order, message = deliveries[0]
            if _delivered(message):
                heappop(deliveries)
            elif message in partition.messages:
                own.append(heappop(deliveries))
            else:
                later = self._earliest_delivery(message, cycle)
                if later <= earliest:
                    horizon = earliest
                    break
                heapreplace(deliveries, (later, order, message))
        for entry in own:
            heappush(deliveries, entry)
        return horizon

    def _group(self, message) -> Partition:
        """`message` joins the partitions its route touches, which merge."""
        units = self._units(message)
        cycle = self.clock.cycle
        joined = []
        for i in range(len(units)):
            partition = self.of_unit.get(units[i])
            if partition is not None:
                # its packets reach the i-th port of its route in cycle + i // 2 at the earliest (a hop
                # takes a cycle at least, to its output unit and to the next input unit alike)
                if cycle + i // 2 <= partition.ahead_until:
                    raise PartitionConflict(
                        f"a message {message.src}->{message.dst} started in cycle {cycle} through a port whose "
                        f"partition was fast-forwarded to cycle {partition.ahead_until}")
                if partition not in joined:
                    joined.append(partition)
        if not joined:
            merged = Partition(cycle)
            self.partitions_found += 1
        else:
            merged = joined[0]
            for partition in joined:
                if len(partition.units) > len(merged.units):
                    merged = partition
            for partition in joined:
                if partition is not merged:
                    self._absorb(merged, partition)
            merged.forget()
        self._join(merged, message, units)
        return merged

    def _join(self, partition: Partition, message, units: tuple) -> None:
        partition.add(message, units)
        self.of_message[message] = partition
        for unit in units:
            self.of_unit[unit] = partition

    def _absorb(self, into: Partition, other: Partition) -> None:
        """Partition `other`'s messages and ports join `into`."""
        for message in other.messages:
            self._join(into, message, self._units(message))
        into.stale = into.stale or other.stale
        into.ahead_until = max(into.ahead_until, other.ahead_until)
        self._end(other)

    def _end(self, partition: Partition) -> None:
        """`partition` is no more (its messages left it or joined another)."""
        self.lived += self.clock.cycle - partition.born
        if partition.queued:
            partition.queued = False
            self.due.remove(partition)

    def _leave(self, partition: Partition, message) -> None:
        """Delivered `message` leaves its partition (dissolved when it was the last)."""
        del partition.messages[message]
        del self.of_message[message]
        if partition.messages:
            partition.stale = True
            return
        for unit in partition.units:
            del self.of_unit[unit]
        self._end(partition)

    def _regroup(self, partition: Partition) -> list:
        """Split a partition some messages left into the groups its remaining messages form."""
        for unit in partition.units:
            del self.of_unit[unit]
        for message in partition.messages:
            del self.of_message[message]
        self._end(partition)
        groups = []
        for message in partition.messages:
            units = self._units(message)
            group = None
            for unit in units:
                other = self.of_unit.get(unit)
                if other is not None and other is not group:
                    if group is None:
                        group = other
                    else:
                        self._absorb(group, other)
                        groups.remove(other)
            if group is None:
                group = Partition(self.clock.cycle)
                group.ahead_until = partition.ahead_until
                groups.append(group)
            self._join(group, message, units)
        self.partitions_found += len(groups) - 1
        return groups

    def partition_cycles(self) -> int:
        """Cycles the partitions made so far lived, summed (of which `skipped_cycles` skipped)."""
        return self.lived + sum(self.clock.cycle - partition.born for partition in set(self.of_message.values()))

    # ------------------------------------------------------------------ probes and skips
    def after_cycle(self, cycle: int) -> None:
        """At the end of a busy cycle: probe the partitions due, skip those whose state repeats."""
        due = self.due
        if not due:
            return
        self.due = []
        for partition in due:
            partition.queued = False
        for partition in due:
            if partition.stale:
                partition.stale = False
                for group in self._regroup(partition):
                    self._probe(group, cycle)
            else:
                self._probe(partition, cycle)

    def _sketch(self, partition: Partition, cycle: int) -> tuple:
        """A cheap look at the partition's state: its messages' packets in flight, when each port is
        next free (or due to step), and the VC the next packet takes downstream (packets take VCs in
        turn: their period often spans a packet per VC)."""
        sketch = []
        for message in partition.messages:
            sketch.append(message.packets_out)
        for port in partition.inputs:
            sketch.append(port.occupied)
            sketch.append(port.next_free(cycle) - cycle)
        for out in partition.outputs:
            sketch.append(out.next_free(cycle) - cycle)
            sketch.append(out.next_vc)
        for injector in partition.injectors:
            sketch.append(relative(injector.next_wake, cycle))
            sketch.append(injector.out.next_vc)
        for receiver in partition.receivers:
            sketch.append(relative(receiver.next_wake, cycle))
        return tuple(sketch)

    def _probe(self, partition: Partition, cycle: int) -> None:
        if cycle <= partition.ahead_until:  # (joined by a message while ports of it were still ahead)
            return
        partition.probes += 1
        if partition.period:  # a phase of its known period (`cut`): it is in its seed state
            if self._periods(partition, list(partition.messages), cycle, partition.period,
                             partition.unsent_deltas) <= 0:
                return  # (no skip fits now: no full signature either)
            state = PartitionState(self.network, partition, cycle, partition.seed)
            growth = [now - then for now, then in zip(state.counters, partition.seed_counters)]
            period, deltas, arrivals = _one_period(partition.period, cycle - partition.seeded, growth,
                                                   partition.arrivals, cycle)
        else:
            if not sketch_matches(partition, self._sketch(partition, cycle)):
                return
            state = PartitionState(self.network, partition, cycle)
            repeat = repeat_of(partition.seen, state, cycle, len(partition.arrivals))
            if repeat is None:
                return
            period, deltas, logged = repeat
            arrivals = partition.arrivals[logged:]
        partition.period = period
        partition.unsent_deltas = deltas[state.unsent_at:]
        periods = self._periods(partition, state.messages, cycle, period, partition.unsent_deltas)
        if periods > 0:
            self._skip(partition, state, cycle, period, periods, deltas, arrivals)
        else:  # (its seed from now on: the arrivals logged so far are let go)
            partition.reseed(state.signature, cycle, state.counters)

    def _periods(self, partition: Partition, messages: list, cycle: int, period: int, unsent_deltas: list) -> int:
        """Whole periods that fit before a message's last packet is cut (`messages`' unsent bytes growing
        by `unsent_deltas` a period), before anything else may start a message (the next simpy event,
        the earliest delivery outside the partition: `_horizon`), and within the current run."""
        periods = periods_before_last_cut(messages, unsent_deltas)
        last = min(self.clock.last_inline_cycle(), self._horizon(partition, cycle) - 1)
        return periods_until(periods, last, cycle, period)

    def _skip(self, partition: Partition, state: PartitionState, cycle: int, period: int, periods: int,
              deltas: list, arrivals: list) -> None:
        """Jump the partition's ports `periods` periods ahead, with its counters and statistics."""
        span = periods * period
        state.shift(span)
        state.counters = [value + periods * delta for value, delta in zip(state.counters, deltas)]
        state.set_counters(state.counters)
        stats = self.stats
        for i in range(len(state.messages)):  # every packet cut in a period was a whole one
            stats.cut += periods * (-deltas[state.unsent_at + i] // state.messages[i].packet_bytes)
        latencies = []
        for latency, packet in arrivals:
            message = packet.msg
            latencies.append(latency)
            stats.packets += periods
            stats.flits += periods * packet.nflits
            stats.bytes += periods * packet.nbytes
            stats.network_latency += periods * (latency + message.created - packet.injected)
            stats.hops += periods * packet.route.get(HOPS, message.route[1])
        add_latencies(stats, latencies, period, periods)
        partition.ahead_until = cycle + span
        partition.reseed(state.signature, partition.ahead_until, state.counters)
        partition.probes = 0
        self.skipped_cycles += span
        self.skips += 1


class PartitionState(Snapshot):
    """A partition's state at the end of `cycle` (its ports' signatures, relative to it), its linear
    counters, and what `shift` moves: Snapshot's, for the ports of one partition (its counters are
    read and set as Snapshot's, over `_counter_fields`)."""

    def __init__(self, network, partition: Partition, cycle: int, seed: tuple | None = None):
        """`seed`: the signature the partition is known to have now (its seed state, at a phase of its
        period): not built again, only its packets collected (where the network checks invariants,
        built and compared)."""
        self.network = network
        self.partition = partition
        self.packets: dict = {}
        self.cycle = cycle
        self.messages = list(partition.messages)
        if seed is None or network.check_invariants:
            self.signature = self._signature()
            if seed is not None and self.signature != seed:
                raise InvariantError(f"a partition's state at cycle {cycle}, a phase of its period, is not the "
                                     f"one it repeats")
        else:
            self.signature = seed
            for port in partition.inputs:
                port.in_flight(self.packets)
            for injector in partition.injectors:
                injector.in_flight(self.packets)
            for receiver in partition.receivers:
                receiver.in_flight(self.packets)
        self.counters = self._counters()

    def _signature(self) -> tuple:
        """Its ports' signatures and its messages' progress, relative to its cycle."""
        partition = self.partition
        cycle = self.cycle
        sig = []
        for port in partition.inputs:
            sig.append(port.signature(cycle, self._packet))
            sig.append(port.router.allocator.port_state(port))
        for out in partition.outputs:
            sig.append(out.signature(cycle))
            sig.append(out.owner.allocator.output_state(out))
        for injector in partition.injectors:  # (its signature has its link's)
            sig.append(injector.signature(cycle, self._packet))
        for receiver in partition.receivers:
            sig.append(receiver.signature(cycle, self._packet))
        sig.append(tuple([(id(m), m.packets_out, max(m.start - cycle, 0)) for m in self.messages]))
        return tuple(sig)

    def _packet(self, packet) -> tuple:
        """Names a packet in a signature (and keeps it to shift)."""
        self.packets[id(packet)] = packet
        injected = packet.injected - self.cycle if packet.injected >= 0 else None
        return (id(packet.msg), packet.nflits, packet.nbytes, injected, packet.last)

    def _counter_fields(self) -> list:
        return self.partition.counter_fields()

    def shift(self, span: int) -> None:
        """Move every cycle stored in the partition's ports `span` later: input units held until then,
        NIC ports' wake-ups moved (routers re-derive theirs when next stepped)."""
        clock = self.network.clock
        partition = self.partition
        until = self.cycle + span
        for port in partition.inputs:
            port.shift(span)
            port.hold(until)
        for out in partition.outputs:
            out.shift(span)
        for nic in (*partition.injectors, *partition.receivers):
            wake = nic.next_wake
            nic.next_wake = NEVER
            nic.shift(span)
            if wake != NEVER:
                clock.wake(nic, wake + span)
        for packet in self.packets.values():
            if packet.injected >= 0:
                packet.injected += span


def _one_period(period: int, multiple: int, deltas: list, arrivals: list, cycle: int) -> tuple:
    """A repeat found `multiple` cycles back, of a state known to repeat every `period` cycles (a
    partition's seed: the state a skip reached, or one that could not skip, is the one its period was
    found for): the growth and arrivals of the last `period` cycles alone, every period's the same.
    (Unchanged if `multiple` is not a multiple of `period`.)"""
    times = multiple // period
    if multiple % period or any([delta % times for delta in deltas]):
        return multiple, deltas, arrivals
    return (period, [delta // times for delta in deltas],
            [(latency, packet) for latency, packet in arrivals if latency + packet.msg.created > cycle - period])

