"""Steady-state fast-forward: skip whole periods of a network that repeats itself, exactly.

Long messages on paths nobody else uses (a ring all-reduce sends 64K packets per step, every NPU
to its neighbour) settle into a steady state: after a transient, the whole network - every
buffer, credit, VC, link reservation and pending wake-up, taken relative to the current cycle -
is the same every P cycles. The simulation is deterministic, so from such a state it would replay
the same P cycles again and again, each time moving the same packets the same way, until
something outside the repetition happens: a message's last packet is cut, a message completes, a
new message is submitted, or another simpy event (the system layer, the end of `run(until=)`) is
due. `FastForward` finds the repetition and jumps over as many whole periods as fit before any of
those, producing exactly the state and statistics the cycle-by-cycle run would have reached (not
its simpy event count, nor where a run's monitor samples link_timeseries: a jump calls neither):

- state: every absolute cycle stored anywhere is shifted by the skipped span;
- counters that grow linearly (flits, bytes, busy and stall cycles, buffer residency, packets,
  hops, component steps, bytes not yet cut) grow by the skipped periods times their growth over
  one period;
- packet latency counts from the message's creation, so the same arrivals one period later have
  a latency P cycles longer: the histogram and the latency sum get those exact values.

How a repetition is found: when the "pilot" NIC port (the first to cut a packet since traffic last
changed) cuts a packet, the end of that cycle is a probe point; the network's signature there is
looked up among the earlier probes (built in full only at probes with the same cheap sketch as the
first sketch seen twice, so at one phase of a period that spans several probes, when the run has
moved on by one component step per VC of the network since the last full one; at most
`MAX_SIGNATURES` kept; each time traffic changes before a second one, twice as many steps before
the next, until a skip; none at the cut of a message with fewer than 2 x VCs + 1 packets left,
too few to repeat and skip before its last). Anything that is not part of the repetition (a
submission, a message's last packet, a completion, a handed-off event) forgets the probes, so a
matched period never contains a one-off side effect. It gives up (until traffic next changes) after
`MAX_PROBES` probes without a repeat, so irregular traffic pays little for it.

This is `garnet.fast_forward = "network"`; the default, "partitions" (partitions.py), does the same
for each group of messages that share no port with the others. Opt out with
`garnet.fast_forward = "off"` or `GarnetNetwork(fast_forward=False)`; tests check the statistics tables and component
steps are identical either way. A run with components outside the network, whose state a signature
cannot see, or with a packet observer, which a skip would not show the skipped packets, must opt out
(synthetic traffic does).
"""

from __future__ import annotations

from collections import Counter

from netsim.garnet.clock import NEVER

MAX_PROBES = 256
MAX_SIGNATURES = 16  # full signatures kept (the oldest is dropped): bounds memory on large networks
MAX_BACKOFF = 256  # the most the steps between full signatures grow (times the network's VCs)


class FastForward:
    """Probes for a repeating network state and skips whole periods of it; see the module docstring."""

    def __init__(self, network):
        self.network = network
        self.skipped_cycles = 0  # reported by the benchmark
        self.skips = 0
        # A full signature visits every VC: take one only after as many component steps as there are
        # VCs since the last, so probing costs a bounded share of the run even on large networks
        # whose state never repeats (it doubled a 1024-NPU all-reduce's time); and twice as many
        # each time traffic changed before a second one could be compared with the first, until a
        # skip (a 1024-NPU 64 MiB all-reduce took 155 such lone signatures, 16% of its time).
        self.vcs = sum(len(port.vcs) for router in network.routers for port in router.inputs)
        self.snapshot_every = self.vcs
        self.snapshot_at = -self.snapshot_every  # clock steps at the last full signature
        self.seen: dict[tuple, tuple] = {}  # signature -> (cycle, counters, arrivals logged then)
        # packets a message must still have to cut to be probed (`cut`): a period of one packet per VC
        # of a port, twice to find it, and one more to skip
        self.packets_to_probe = 2 * max((len(port.vcs) for router in network.routers for port in router.inputs),
                                        default=1) + 1
        self._forget()

    def reset(self) -> None:
        """Traffic changed (or a skip was taken): forget every probe (nothing to do if none was
        taken since the last reset: several per message, the common case on short messages)."""
        if self.pilot is None:  # (no packet cut since the last reset: no probe, nothing logged)
            return
        if len(self.seen) == 1:  # a full signature never compared: back off
            self.snapshot_every = min(2 * self.snapshot_every, MAX_BACKOFF * self.vcs)
        self._forget()

    def _forget(self) -> None:
        """The state of no probe taken."""
        self.sketches: set[tuple] = set()
        self.reference = None  # the first sketch seen twice: full signatures are taken only there
        self.seen = {}
        self.pilot = None  # NIC injection port whose packet cuts mark probe points (None: the next to cut one)
        self.probe_due = False
        self.probes = 0
        self.arrivals: list[int] = []  # latency of every packet arrived since the first full signature

    def changed(self, message) -> None:
        """Something not part of a steady state happened (to `message`, or a new message: None)."""
        self.reset()

    def cut(self, injector, message) -> None:
        """NIC injection port `injector` cut a (not last) packet of `message`: the end of this cycle is
        a probe point if it is the pilot, and if the message has packets enough left to repeat."""
        if message.unsent < self.packets_to_probe * message.packet_bytes:
            return  # a period often spans a packet per VC: two to find it and one to skip would not fit
        if self.pilot is None:
            self.pilot = injector
        if injector is self.pilot and self.probes < MAX_PROBES:
            self.probe_due = True
            self.network.clock.hook_at = 0  # probe at the end of this cycle (`after_cycle`)

    def arrived(self, packet, latency: int) -> None:
        """`packet` arrived with `latency`: logged while a full signature waits for its match (a skip
        replays the arrivals since it), else dropped (a reset then has nothing to forget)."""
        if self.seen and self.probes < MAX_PROBES:
            self.arrivals.append(latency)

    def after_cycle(self, cycle: int) -> None:
        """At the end of a busy cycle: probe if due, and skip if the state has been seen before."""
        if not self.probe_due:
            return
        self.probe_due = False
        self.probes += 1
        # A cheap sketch of the state first: the full signature is built only at a probe whose
        # sketch has been seen before, i.e. about once per period instead of at every probe.
        net = self.network
        if not sketch_matches(self, (net.packets_in_network, net.clock.sketch(cycle))):
            return
        if net.clock.steps - self.snapshot_at < self.snapshot_every:
            return
        self.snapshot_at = net.clock.steps
        state = Snapshot(net, cycle)
        repeat = repeat_of(self.seen, state, cycle, len(self.arrivals))
        if repeat is None:
            return
        period, deltas, logged = repeat
        periods = self._periods(state, cycle, period, deltas)
        if periods > 0:
            self._skip(state, cycle, cycle - period, period, periods, deltas, self.arrivals[logged:])

    def _periods(self, state: "Snapshot", cycle: int, period: int, deltas: list[int]) -> int:
        """Whole periods that fit before the first thing that is not part of the repetition."""
        periods = periods_before_last_cut(list(state.messages.values()), deltas[state.unsent_at:])
        last = self.network.clock.last_inline_cycle()  # every skipped cycle must be one the clock could run
        return periods_until(periods, last, cycle, period)

    def _skip(self, state: "Snapshot", cycle: int, first: int, period: int, periods: int,
              deltas: list[int], latencies: list[int]) -> None:
        net = self.network
        span = periods * period
        state.shift(span, first)
        state.set_counters([value + periods * delta for value, delta in zip(state.counters, deltas)])
        add_latencies(net.packet_stats, latencies, period, periods)
        net.skip_deadlock_scans(cycle + span)
        self.skipped_cycles += span
        self.skips += 1
        self.reset()
        self.snapshot_every = self.vcs  # a repeat was found: full signatures at their first pace again


def sketch_matches(holder, sketch: tuple) -> bool:
    """A probe's cheap sketch of the state, kept in `holder` (its `sketches` seen and its `reference`):
    True when a full signature is worth building, i.e. the sketch was seen before and is the reference
    one (signatures at probes of one sketch only come at the same phase of a period that spans several
    probes, packets taking VCs in turn, say, and can match: about one per period instead of one per probe)."""
    if sketch not in holder.sketches:
        holder.sketches.add(sketch)
        return False
    if holder.reference is None:
        holder.reference = sketch
    return sketch == holder.reference


def periods_until(periods: int, last: int, cycle: int, period: int) -> int:
    """At most `periods` periods from `cycle` that end by cycle `last` (NEVER: no bound)."""
    return periods if last == NEVER else min(periods, (last - cycle) // period)


def repeat_of(seen: dict, state, cycle: int, logged: int) -> tuple | None:
    """`state` (of the end of `cycle`, with `logged` arrivals logged so far) against the earlier states
    `seen` (signature -> (cycle, counters, arrivals logged)): the period since the one it repeats,
    the counters' growth over it and the arrivals logged then; None, and `state` kept, if it repeats
    none (the oldest is dropped beyond MAX_SIGNATURES)."""
    earlier = seen.get(state.signature)
    if earlier is None:
        if len(seen) == MAX_SIGNATURES:
            del seen[next(iter(seen))]
        seen[state.signature] = (cycle, state.counters, logged)
        return None
    first, counters, logged_then = earlier
    return cycle - first, [now - then for now, then in zip(state.counters, counters)], logged_then


def periods_before_last_cut(messages: list, unsent_deltas: list) -> int:
    """Whole periods that leave each of `messages` (their unsent bytes growing by `unsent_deltas` a
    period) a whole packet to cut and its last: every cut in a skipped period stays a full one."""
    periods = NEVER
    for message, delta in zip(messages, unsent_deltas):
        if delta < 0:
            periods = min(periods, (message.unsent - 1) // -delta)
    return periods


def add_latencies(stats, latencies: list, period: int, periods: int) -> None:
    """Count the latencies of one period's arrivals in `periods` later periods (PacketStats `stats`),
    P cycles longer in each: their packets were created when their messages were."""
    histogram = stats.histogram
    for latency, count in Counter(latencies).items():
        for k in range(1, periods + 1):
            later = latency + k * period
            histogram[later] = histogram.get(later, 0) + count
    stats.latency += periods * sum(latencies) + len(latencies) * period * periods * (periods + 1) // 2


class Snapshot:
    """The network's state at the end of `cycle`: a signature with every cycle taken relative to
    it (each component gives its own, beside its fields), the linear counters, and what `shift`
    must move to jump ahead."""

    def __init__(self, network, cycle: int):
        self.network = network
        self.packets: dict[int, object] = {}
        self.messages: dict[int, object] = {}  # id -> message, in the order first met
        self.cycle = c = cycle
        name = self._packet
        sig = [network.packets_in_network, network.clock.signature(c)]
        for router in network.routers:
            sig.append(router.signature(c))
            sig.extend(port.signature(c, name) for port in router.inputs)
            sig.extend(out.signature(c) for out in router.outputs)
        for injector in network.injectors:
            for message in injector.queue:
                self._message(message)
            sig.append(injector.signature(c, name))
        for receiver in network.receivers:
            sig.append(receiver.signature(c, name))
        sig.append(tuple((id(m), m.packets_out, max(m.start - c, 0)) for m in self.messages.values()))
        self.signature = tuple(sig)
        self.counters = self._counters()

    def _message(self, message) -> None:
        self.messages.setdefault(id(message), message)

    def _packet(self, packet) -> tuple:
        self.packets[id(packet)] = packet
        self._message(packet.msg)
        injected = packet.injected - self.cycle if packet.injected >= 0 else None
        return (id(packet.msg), packet.nflits, packet.nbytes, injected, packet.last)

    def _counter_fields(self):
        """(object, attribute) of every counter that grows linearly while the state repeats, in a
        fixed order: messages' unsent bytes last."""
        net = self.network
        yield net.clock, "steps"
        for name in ("cut", "packets", "flits", "bytes", "network_latency", "hops"):
            yield net.packet_stats, name
        for out in net.output_units():
            yield from out.counter_fields()
        for router in net.routers:
            for port in router.inputs:
                yield from port.counter_fields()
        for message in self.messages.values():
            yield message, "unsent"

    def _counters(self) -> list[int]:
        """The counters' values, in `_counter_fields` order (messages' unsent bytes from `unsent_at`)."""
        values = [getattr(owner, name) for owner, name in self._counter_fields()]
        self.unsent_at = len(values) - len(self.messages)
        return values

    def set_counters(self, values: list[int]) -> None:
        for (owner, name), value in zip(self._counter_fields(), values):
            setattr(owner, name, value)

    def shift(self, span: int, first: int) -> None:
        """Move every stored cycle `span` cycles later. A router's `last_move` moves only if it sent
        during the period that started at `first`."""
        net = self.network
        net.clock.jump(span)
        for router in net.routers:
            router.shift(span, router.last_move > first)
            for port in router.inputs:
                port.shift(span)
            for out in router.outputs:
                out.shift(span)
        for component in (*net.injectors, *net.receivers):
            component.shift(span)
        for packet in self.packets.values():
            if packet.injected >= 0:
                packet.injected += span
