"""Synthetic traffic on the packet backend: latency/load curves and saturation throughput.

Every NPU injects packets of `packet_flits` flits by a Bernoulli process (a packet starts in a
cycle with probability rate / packet_flits, drawn as geometric gaps from a per-NPU generator
seeded by `seed`), to destinations chosen by a pattern. Packets created during the measurement
window (after `warmup_cycles`) are measured; the run then drains (traffic continues, unmeasured)
until they have all arrived, or for at most `cycles` more cycles. Loads are in flits/node/cycle.

BookSim's conventions, for comparisons with it: `include_source` lets uniform and hotspot traffic
pick the source itself among the destinations and has a permutation's fixed points send to
themselves (through their router; otherwise no NPU sends to itself); `injection_delay` holds
every packet that many cycles at its source before the NIC may inject it (BookSim's latencies
carry one cycle more than netsim's: its terminal reads a flit a cycle after its link delivered it).
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from typing import Callable

from netsim.booksim_rng import random_permutation
from netsim.collector import rare_garbage_collection
from netsim.errors import ConfigError
from netsim.garnet.packet_stats import WindowTally
from netsim.garnet.traffic_source import TrafficSource, uniform_destination
from netsim.network_config import NetworkConfig
from netsim.network_plan import NetworkPlan, plan_network
from netsim.app.saturation import Saturation, bracket, past_saturation
from netsim.topology import Topology

PACKET_BACKEND = "garnet"  # synthetic traffic's sources are the packet backend's (netsim.garnet.traffic_source)
HOTSPOT_FRACTION = 0.25  # share of hotspot traffic that goes to NPU 0


def _bits(topology: Topology, pattern: str) -> int:
    n = topology.npus
    if n & (n - 1):
        raise ConfigError(f"traffic pattern '{pattern}' needs a power-of-two number of NPUs, not {n}")
    return n.bit_length() - 1


def _uniform(topology: Topology, src: int, rng: random.Random, others: bool = True) -> int:
    """Any NPU but the source (or any NPU, the source included, unless `others`)."""
    return uniform_destination(topology.npus, src, rng, others)


def _transpose(topology: Topology, src: int, rng: random.Random, others: bool = True) -> int:
    sizes = topology.dim_sizes
    if len(sizes) == 2 and sizes[0] == sizes[1]:
        x, y = topology.coords(src)
        return topology.npu_at((y, x))
    bits = _bits(topology, "transpose")
    if bits % 2:
        raise ConfigError("traffic pattern 'transpose' needs a square 2-D torus or 4^k NPUs")
    half = bits // 2
    return ((src << half) | (src >> half)) & (topology.npus - 1)


def _tornado(topology: Topology, src: int, rng: random.Random, others: bool = True) -> int:
    return topology.npu_at([c + math.ceil(k / 2) - 1 for c, k in zip(topology.coords(src), topology.dim_sizes)])


def _neighbour(topology: Topology, src: int, rng: random.Random, others: bool = True) -> int:
    return topology.npu_at([c + 1 for c in topology.coords(src)])


def _bit_complement(topology: Topology, src: int, rng: random.Random, others: bool = True) -> int:
    _bits(topology, "bit-complement")
    return ~src & (topology.npus - 1)


def _bit_reverse(topology: Topology, src: int, rng: random.Random, others: bool = True) -> int:
    bits = _bits(topology, "bit-reverse")
    return int(format(src, f"0{bits}b")[::-1], 2) if bits else 0


def _shuffle(topology: Topology, src: int, rng: random.Random, others: bool = True) -> int:
    bits = _bits(topology, "shuffle")
    return ((src << 1) | (src >> (bits - 1))) & (topology.npus - 1) if bits else 0


def _hotspot(topology: Topology, src: int, rng: random.Random, others: bool = True) -> int:
    if (src != 0 or not others) and rng.random() < HOTSPOT_FRACTION:
        return 0
    return _uniform(topology, src, rng, others)


def _bad_dragon(topology: Topology, src: int, rng: random.Random, others: bool = True) -> int:
    """A random NPU of the next group of a dragonfly (BookSim's bad_dragon): every group's traffic
    crosses the one global link to its neighbour group under minimal routing."""
    wiring = getattr(topology, "dragonfly", None)
    if wiring is None:
        raise ConfigError(f"traffic pattern 'bad-dragon' needs a dragonfly, not a {topology.kind}")
    group = wiring.group_npus
    return (int(rng.random() * group) + (src // group + 1) * group) % topology.npus


# name -> destination(topology, src, rng, others); a new pattern is a registration here. `others`:
# random patterns draw among the other NPUs only (permutations ignore it).
PATTERNS: dict[str, Callable[[Topology, int, random.Random, bool], int]] = {
    "uniform": _uniform,
    "transpose": _transpose,
    "tornado": _tornado,
    "bit-complement": _bit_complement,
    "bit-reverse": _bit_reverse,
    "shuffle": _shuffle,
    "neighbour": _neighbour,
    "hotspot": _hotspot,
    "bad-dragon": _bad_dragon,
}
RANDOM_PATTERNS = ("uniform", "hotspot", "bad-dragon")  # the others are fixed permutations
# name -> permutation(topology, seed): destination of every source, drawn once per run from its seed
# (random-permutation is BookSim's randperm: the same permutation as BookSim's for the same seed)
SEEDED_PERMUTATIONS: dict[str, Callable[[Topology, int], list[int]]] = {
    "random-permutation": lambda topology, seed: random_permutation(topology.npus, seed),
}
PATTERN_NAMES = (*PATTERNS, *SEEDED_PERMUTATIONS)


def packet_plan(network: NetworkConfig | NetworkPlan) -> NetworkPlan:
    """`network`'s plan on the packet backend, where synthetic traffic runs whatever its config's backend."""
    if isinstance(network, NetworkPlan):
        return network
    if network.backend != PACKET_BACKEND:
        network = dataclasses.replace(network, backend=PACKET_BACKEND)
    return plan_network(network, f"synthetic traffic on {network.name}")


class SynthRun:
    """One synthetic-traffic run at one offered load; `execute()` returns run_synth's dict."""

    def __init__(self, network: NetworkConfig | NetworkPlan, pattern: str, rate: float, packet_flits: int, cycles: int, seed: int,
                 warmup_cycles: int | None, network_options: dict | None = None, include_source: bool = False,
                 injection_delay: int = 0):
        if pattern not in PATTERN_NAMES:
            raise ConfigError(f"unknown traffic pattern '{pattern}' (expected one of {', '.join(PATTERN_NAMES)})")
        if packet_flits < 1 or cycles < 1:
            raise ConfigError(f"--packet-flits {packet_flits} and --cycles {cycles}: each must be at least 1")
        if warmup_cycles is not None and warmup_cycles < 0:
            raise ConfigError(f"--warmup: expected a whole number >= 0, got {warmup_cycles}")
        if injection_delay < 0:
            raise ConfigError(f"--injection-delay: expected a whole number >= 0, got {injection_delay}")
        self.include_source = include_source
        self.injection_delay = injection_delay
        if not 0 < rate <= packet_flits:
            raise ConfigError(f"offered load {rate} flits/node/cycle must be > 0 (and at most one packet per cycle)")
        self.plan = packet_plan(network)
        self.topology = self.plan.topology
        if self.topology.npus < 2:
            raise ConfigError(f"network '{self.plan.config.name}' has {self.topology.npus} NPU: synthetic traffic "
                              "needs at least 2")
        # The traffic sources' random draws are not network state: no steady state to fast-forward.
        options = {"fast_forward": False, **(network_options or {})}
        with rare_garbage_collection():  # (a 16x16 torus's build ran a full collection)
            self.network = self.plan.create_network(**options)
        self.pattern = pattern
        permute = SEEDED_PERMUTATIONS.get(pattern)
        self.permutation = None if permute is None else permute(self.topology, seed)
        self.rate = rate
        self.packet_flits = packet_flits
        self.packet_bytes = packet_flits * self.network.flit_bytes
        self.network.params.check_whole_packets(self.packet_bytes, self.network.buffer_depths(), "--packet-flits")
        self.cycles = cycles
        self.warmup = cycles // 5 if warmup_cycles is None else warmup_cycles
        self.end = self.warmup + cycles
        self.window = WindowTally(self.warmup, self.end)  # the packets that arrive, against the window
        self.network.packet_observer = self.window.observe
        p = min(1.0, rate / packet_flits)  # a packet starts in a cycle with probability p
        log_q = math.log1p(-p) if p < 1 else 0.0  # for geometric gaps (0.0: every cycle; TrafficSource.gap)
        draw = None if pattern == "uniform" else PATTERNS.get(pattern)  # (the sources draw uniform ones themselves)
        self.sources = [self._source(npu, seed, log_q, draw) for npu in range(self.topology.npus)]

    def _source(self, npu: int, seed: int, log_q: float, pattern) -> TrafficSource:
        """NPU `npu`'s packet generator, drawing from a generator of its own (seeded from `seed` and
        `npu`); a permutation's destination is fixed now."""
        rng = random.Random(seed * 1_000_003 + npu)
        if self.permutation is not None:
            fixed_dst = self.permutation[npu]
        else:
            fixed_dst = -1 if self.pattern in RANDOM_PATTERNS else pattern(self.topology, npu, rng)
        net = self.network
        return TrafficSource(net.clock, net.sender, npu, rng, log_q, pattern, self.topology, not self.include_source,
                             fixed_dst, self.packet_bytes, self.injection_delay, self.warmup, self.end)

    @property
    def generated_flits(self) -> int:
        """Flits of the packets created in the measured window."""
        return sum(source.generated for source in self.sources) * self.packet_flits

    @property
    def measured_out(self) -> int:
        """Packets created in the measured window that have not arrived yet."""
        return sum(source.generated for source in self.sources) - self.window.measured_in

    def progress(self) -> tuple[float, str]:
        """For the live view: the share of the run's cycles done and what it is doing (warming up,
        measuring, or draining the measured packets after the window, at most `cycles` more)."""
        now = self.network.clock.now_cycle()
        inside = f"{self.network.packets_in_network:,} packets in the network"
        if now < self.end:
            phase = "warming up" if now < self.warmup else "measuring"
            return now / self.end, f"cycle {now:,} of {self.end:,} ({phase}); {inside}"
        return 0.999, (f"draining: {self.measured_out:,} measured packets still out at cycle {now:,} (measured "
                       f"until {self.end:,}; stops waiting at {self.end + self.cycles:,}); {inside}")

    def execute(self) -> dict:
        """Warm up, measure, drain (for at most as long again); return the summary. The garbage
        collector runs rarely meanwhile, as in Network.run (the routes built as pairs first send
        made Python's default collections 4% of a 16x16 torus run)."""
        self.started = time.perf_counter()
        net = self.network
        for source in self.sources:
            source.start()
        with rare_garbage_collection():
            net.env.run(until=net.clock.ns(self.end))
            limit = self.end + self.cycles
            step = max(100, self.cycles // 10)
            now = self.end
            while self.measured_out and now < limit:
                now = min(limit, now + step)
                net.env.run(until=net.clock.ns(now))
        return self.summary(now)

    def summary(self, now: int) -> dict:
        """The figures of the run up to cycle `now`; a run stopped early (Ctrl-C) is measured over the
        part of its window it reached."""
        net = self.network
        measured_cycles = max(0, min(now, self.end) - self.warmup)
        nodes_cycles = self.topology.npus * measured_cycles or 1
        stats = self.window.stats.summary()
        return {
            "pattern": self.pattern,
            "rate": self.rate,
            "packet_flits": self.packet_flits,
            "offered_load": self.generated_flits / nodes_cycles,
            "accepted_load": self.window.accepted_flits / nodes_cycles,
            **{key: stats[key] for key in ("avg_packet_latency_cycles", "p99_packet_latency_cycles",
                                           "avg_network_latency_cycles", "avg_hops", "packets", "flits")},
            "drained": not self.measured_out,
            "cycles": now,
            "warmup_cycles": self.warmup,
            "flit_hops": net.flit_hops(),
            "events": net.events_so_far(),
            "wall_time_s": time.perf_counter() - self.started,
            "warnings": list(net.warnings),
        }


def run_synth(network_config, pattern: str, rate: float, packet_flits: int, cycles: int, seed: int,
              warmup_cycles: int | None = None, network_options: dict | None = None, **conventions) -> dict:
    """One run at offered load `rate` (flits/node/cycle); see the module docstring.

    `network_options` go to GarnetNetwork (e.g. check_invariants=True in tests); `conventions`:
    include_source, injection_delay."""
    return SynthRun(network_config, pattern, rate, packet_flits, cycles, seed, warmup_cycles,
                    network_options, **conventions).execute()


def sweep_points(network_config, pattern: str, packet_flits: int, cycles: int, seed: int, rates=None,
                 warmup_cycles: int | None = None, watch: Callable[[SynthRun, str], None] | None = None,
                 **conventions):
    """Walk offered load up to saturation, yielding each load's result (with "saturated": past
    saturation by `netsim.app.saturation`'s rule, the studies' too) as it is measured; `watch(run,
    label)` is called before each run starts (progress display, Ctrl-C).

    Without `rates`: steps of 0.05 until the first saturated load, then three bisection steps
    between the last good and the first saturated load.
    """
    plan = packet_plan(network_config)  # (one plan for every load)

    def measure(rate: float, label: str) -> dict:
        run = SynthRun(plan, pattern, rate, packet_flits, cycles, seed, warmup_cycles, None, **conventions)
        if watch is not None:
            watch(run, label)
        return run.execute()

    zero_load = measure(0.002, "zero-load latency")["avg_packet_latency_cycles"] or 1

    def point(rate: float) -> dict:
        result = measure(rate, f"load {rate:g}")
        result["saturated"] = past_saturation(result, zero_load)
        return result

    if rates is not None:
        for rate in rates:
            yield point(rate)
        return
    good, bad, rate = 0.0, None, 0.05
    while rate <= 1.0 + 1e-9:
        result = point(round(rate, 4))
        yield result
        if result["saturated"]:
            bad = rate
            break
        good, rate = rate, rate + 0.05
    for _ in range(3 if bad is not None else 0):
        mid = round((good + bad) / 2, 4)
        result = point(mid)
        yield result
        if result["saturated"]:
            bad = mid
        else:
            good = mid


def destination_shares(topology: Topology, pattern: str, npu: int, permutation: list[int] | None = None,
                       include_source: bool = False) -> dict[int, float]:
    """The share of `npu`'s packets that goes to each destination under `pattern`, as TrafficSource
    draws them (`permutation`: a seeded permutation's destinations; an NPU a permutation maps to
    itself sends nothing unless `include_source`)."""
    if pattern in SEEDED_PERMUTATIONS or pattern not in RANDOM_PATTERNS:
        dst = permutation[npu] if pattern in SEEDED_PERMUTATIONS else PATTERNS[pattern](topology, npu, None)
        return {} if dst == npu and not include_source else {dst: 1.0}
    if pattern == "bad-dragon":
        group = _bad_dragon(topology, npu, _FirstDraw())
        size = topology.dragonfly.group_npus
        return {dst: 1.0 / size for dst in range(group, group + size)}
    uniform = [dst for dst in range(topology.npus) if include_source or dst != npu]
    shares = {dst: 1.0 / len(uniform) for dst in uniform}
    if pattern == "hotspot" and (npu != 0 or include_source):
        shares = {dst: share * (1.0 - HOTSPOT_FRACTION) for dst, share in shares.items()}
        shares[0] = shares.get(0, 0.0) + HOTSPOT_FRACTION
    return shares


class _FirstDraw:
    """A random source whose draw is 0: the first NPU of a pattern's random range (bad-dragon's group)."""

    @staticmethod
    def random() -> float:
        return 0.0


def ideal_saturation_load(network_config, pattern: str, seed: int = 0, include_source: bool = False) -> float:
    """The channel-load bound on the saturation load (Dally and Towles' ideal throughput), in the
    offered load's unit (flits/node/cycle): every NPU offers one flit a cycle, spread over its
    destinations (`destination_shares`) along the topology's minimal routes, a route's equal
    alternatives (its tie bits) taking equal shares; each link carries at most one flit per its
    cycles per flit, and a single NIC port (`garnet.nic_ports = "single"`) one a cycle. The offered
    load at which the busiest of them is full: no network sustains more, a real one saturates at
    or below it. Computed from the topology and the pattern only (no run)."""
    plan = packet_plan(network_config)
    topology, cpf = plan.topology, plan.backend.params.link_cpf
    permute = SEEDED_PERMUTATIONS.get(pattern)
    permutation = None if permute is None else permute(topology, seed)
    link_load = [0.0] * len(topology.links)
    injected, ejected = [0.0] * topology.npus, [0.0] * topology.npus
    for src in range(topology.npus):
        for dst, share in destination_shares(topology, pattern, src, permutation, include_source).items():
            injected[src] += share
            ejected[dst] += share
            tied = topology.tie_dims(src, dst)
            choices = [ties for ties in range(tied + 1) if ties & tied == ties]  # every subset of the tie bits
            for ties in choices:
                path = topology.route(src, dst, ties)
                for u, v in zip(path, path[1:]):
                    link_load[topology.link(u, v).id] += share / len(choices)
    busiest = max((load * cycles for load, cycles in zip(link_load, cpf)), default=0.0)
    if plan.config.garnet.nic_ports == "single":
        busiest = max(busiest, *injected, *ejected)
    if busiest == 0.0:
        raise ConfigError(f"traffic pattern '{pattern}' on {plan.config.name} sends nothing over the network")
    return 1.0 / busiest


def sweep_saturation(results: list[dict]) -> Saturation:
    """A sweep's saturation bracket (loads as offered, `rate`): the last load kept up with below
    the first one past saturation, and that one (`netsim.app.saturation`, as the studies have it)."""
    return bracket(results, lambda result: result["saturated"])


def saturation_load(results: list[dict]) -> float:
    """The low end of a sweep's saturation bracket (0 when even its lowest load was past saturation)."""
    return sweep_saturation(results).low or 0.0


def sweep_synth(network_config, pattern: str, packet_flits: int, cycles: int, seed: int,
                rates=None, warmup_cycles: int | None = None, **conventions) -> tuple[list[dict], float]:
    """The whole sweep of `sweep_points`: (per-load results in load order, saturation load)."""
    results = sorted(sweep_points(network_config, pattern, packet_flits, cycles, seed, rates, warmup_cycles, **conventions),
                     key=lambda r: r["rate"])
    return results, saturation_load(results)
