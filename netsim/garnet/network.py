"""GarnetNetwork: the packet backend behind the NetworkAPI, flit-accurate (`fidelity = "flit"`)
or moving packets as units with virtual cut-through (`fidelity = "packet"`: a packet needs credits
for all its flits at the next VC, holds the link for its flit count; valid when every VC buffer
holds a whole packet). Both keep the router pipeline, link latencies, VCs, dateline classes, atomic
VC allocation, statistics and invariant checks; zero-load latency is the same closed form.

Every topology node is a `Router` (but NPUs attached directly to a switch, `single_router`); every
NPU also has a NIC: an `Injector` per injection port and a `Receiver` per ejection port of its
router, one of each per router link (`nic_ports = "per-link"`) or one of each for all links
(`"single"`). A router is its rooms (router.py): input units, output units, the switch allocator
of its model (`garnet.allocator`: allocators/), the crossbar; routes and VC classes come from the
routing unit (`garnet.routing`: routing/), their tables from `RouteTables` (routes.py), and new
messages enter through the `Sender` (sender.py). Time runs in integer cycles of `clock_ghz` on a
`CycleClock` that shares the simpy Environment (nanoseconds) with the system layer.

Zero-load latency of one packet of L flits over H router-to-router links (documented closed form,
checked by the tests), from the cycle its head leaves the NIC to the cycle its tail reaches the
destination NIC:

    1 (injection link) + sum of pipeline cycles of the H+1 routers visited
    + sum over the H links of (latency + cpf - 1) + 1 (ejection link)
    + (L - 1) * (largest cpf on the route, NIC links counting 1)

(NPUs attached to a switch directly: the injection and ejection links are the topology's, each
counting latency + cpf - 1, and H counts router-to-router links only.) BookSim's terminal reads a
flit one cycle after its link delivered it: its packet latencies are one cycle more (synthetic
traffic's `injection_delay = 1` adds that cycle for comparisons).

where cpf is a link's cycles per flit. A message is injected at the first whole cycle at or after
its send (plus the topology's NIC latency, twice per dimension crossed, as in the analytical model)
and delivered when its last tail arrives.

Long messages on uncontended paths reach a steady state that repeats every few cycles; the
network skips whole repetitions of it, per partition of messages that share no port (partitions.py)
or of the whole network (fastforward.py), by `garnet.fast_forward`: the same statistics as without,
which tests compare with `fast_forward=False`; so a 1 GiB ring all-reduce costs about as much as its
transients.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Hashable

import simpy

from netsim.api import Network
from netsim.errors import ConfigError, InvariantError, QuotientConflict
from netsim.garnet import core, deadlock
from netsim.garnet.allocators import ALLOCATORS
from netsim.garnet.clock import CycleClock
from netsim.garnet.config import GarnetConfig
from netsim.garnet.crossbar import Slots
from netsim.garnet.shortcuts.fastforward import FastForward
from netsim.garnet.input_unit import InputUnit
from netsim.garnet.shortcuts.mirrored import MirroredOrbit, MirroredSend
from netsim.garnet.nic import Injector, Receiver
from netsim.garnet.output_unit import OutputUnit, link_counters
from netsim.garnet.packet import Message
from netsim.garnet.packet_stats import PacketStats
from netsim.garnet.params import Params
from netsim.garnet.shortcuts.partitions import PartitionForward
from netsim.garnet.shortcuts.quotient import Quotient, fold
from netsim.garnet.router import Router
from netsim.garnet.routes import RouteTables
from netsim.garnet.routing import ROUTING
from netsim.garnet.sender import Sender
from netsim.garnet.stats import latency_table, link_extra, nic_frame, vc_frame
from netsim.topology import Topology
from netsim.topology.base import MessagePaths

if TYPE_CHECKING:
    from array import array

    import pandas as pd


class GarnetNetwork(Network):
    """Routers, links and NICs built from a Topology and the `[garnet]` table."""

    backend_name = "garnet"
    counters_any_time = True  # link_counters leave out busy time ahead of now (_busy_ahead)
    mirrors = "copies"  # system.symmetric and .lockstep: one NPU runs for many, every copy sent (mirrored.py)

    def __init__(self, topology: Topology, env: simpy.Environment | None = None, config=None, *,
                 check_invariants: bool = False, dateline: bool = True, seed: int = 0, batch: bool = True,
                 fast_forward: bool = True, params: Params | None = None):
        """`config`: a NetworkConfig (its `garnet` table is used) or a GarnetConfig; `params`: its
        Params on `topology` where a plan made them already (netsim.garnet.plan), else made here.

        `seed` seeds the routing unit's tie-breaking (the only random choice: arbitration is round
        robin), so different seeds give different, equally valid results where routes have ties.

        `check_invariants` checks credits and buffers after every busy cycle (tests); `dateline=False`
        is a test-only switch that lets ring hops use any VC (and so deadlock); `batch=False` is a
        test-only switch that makes flit fidelity grant one flit at a time (batching must not change
        results); `fast_forward=False` turns off skipping repeated steady states (partitions.py,
        fastforward.py; same statistics), whatever `garnet.fast_forward` says.
        """
        super().__init__(topology, env)
        core.notice_once()
        cfg = getattr(config, "garnet", config) or GarnetConfig()
        self.config = cfg
        self._options = dict(check_invariants=check_invariants, dateline=dateline, seed=seed, batch=batch,
                             fast_forward=fast_forward)  # (sibling)
        self.params = params = params if params is not None else Params(cfg, topology)
        self.model = ALLOCATORS[cfg.allocator]
        problem = self.model.check(cfg.router_latency)
        if problem:
            raise ConfigError(problem)
        self.routing = ROUTING[cfg.routing](topology, seed, dateline)
        self.routing.check_vcs(params.vcs, dateline)
        self.check_invariants = check_invariants
        self.flit_bytes = params.flit_bytes
        self.packet_bytes = params.packet_bytes
        self.clock = CycleClock(self.env, cfg.clock_ghz)
        self.clock.after_cycle = self._after_cycle
        self._build(batch)
        params.check_whole_packets(self.packet_bytes, self.buffer_depths())
        self.routes = RouteTables(topology, self.routing, params, self.link_units, self.between_routers,
                                  self._injector_of, self._eject_of, self._nic_of)
        self.packet_stats = PacketStats()
        self.packet_observer = None  # optional callable(packet, cycle) for synthetic traffic
        self._starved: set[int] = set()  # routers already warned about
        self.scan_every = max(1, cfg.deadlock_cycles // 4)
        self.next_scan = cfg.deadlock_cycles
        # (a routing unit that draws per packet makes states that look alike route differently)
        forward = {"partitions": PartitionForward, "network": FastForward}.get(cfg.fast_forward)
        self.fast_forward = forward(self) if forward and fast_forward and self.routing.periodic else None
        self.sender = Sender(self)  # (send_message)
        self._handed_off: simpy.Event | None = None  # (handed_off)
        self._message_paths: MessagePaths | None = None  # (uniform_orbit)
        self.quotient: Quotient | None = None  # the network that runs a folded symmetric run (quotient.py)
        self._unfolded = False  # a symmetric run chose every copy sent: no later one may fold

    # ------------------------------------------------------------------ construction
    def _build(self, batch: bool) -> None:
        topo, params, clock = self.topology, self.params, self.clock
        release_on_sent = params.release_on_sent
        direct = topo.direct_terminals
        self.router_at: dict[int, Router] = {}
        for node in sorted(topo.nodes):
            if not (direct and node < topo.npus):
                self.router_at[node] = Router(clock, node, params.pipeline(node))
        self.routers = list(self.router_at.values())
        self.link_units: list[OutputUnit] = []  # per topology link: the output unit that drives it
        self.between_routers: list[bool] = []  # per topology link: router to router (not a NIC's)
        self.injectors: list[Injector] = []  # every NIC injection port
        self.receivers: list[Receiver] = []  # one per ejection port
        self.nic_ports: list[tuple[int, str, int, OutputUnit]] = []  # (npu, kind, link id, unit) for the report
        self._injector_of: dict[int, Injector] = {}  # first link of a route -> its injection port
        self._eject_of: dict[int, OutputUnit] = {}  # last link of a route -> its ejection port
        self._nic_of: dict[int, tuple] = {}  # NPU -> (injector, ejection unit) for a route to itself
        for link, latency, cpf in zip(topo.links, params.link_latency, params.link_cpf):
            up, down = self.router_at.get(link.src), self.router_at.get(link.dst)
            self.between_routers.append(up is not None and down is not None)
            if up is None:  # an NPU's NIC attached to its switch directly
                self.link_units.append(self._add_injection_port(down, [link.id], f"nic-{link.src}", link.src,
                                                                latency, cpf, batch))
            elif down is None:
                self.link_units.append(self._add_ejection_port(up, [link.id], f"to-nic-{link.dst}", link.dst,
                                                               latency, cpf))
            else:
                depth = params.buffer_flits(link.dst, link.dim, latency, cpf)
                port = InputUnit(down, f"from-{link.src}", params.vcs(link.dim), depth, link.id)
                out = OutputUnit(up, clock, f"to-{link.dst}", link.id, cpf, latency, release_on_sent)
                self._connect(out, port, down, sa_stage=1)
                down.add_input(port)
                up.add_output(out)
                self.link_units.append(out)
        # per-link: one injection port per outgoing link and one ejection port per incoming link, so
        # an NPU drives all its links at once (as the analytical model assumes); single: one of each,
        # shared by all links (Garnet's and BookSim's NI: one flit per cycle in and out of an NPU).
        per_link = self.config.nic_ports == "per-link"
        for npu in range(topo.npus):
            router = self.router_at.get(npu)
            if router is None:
                continue
            links_out = [out.link_id for out in router.outputs]  # read before NIC ports join them
            links_in = [port.link_id for port in router.inputs]
            for links in ([link] for link in links_out) if per_link else [links_out]:
                label = f"-to-{topo.links[links[0]].dst}" if per_link else ""
                self._add_injection_port(router, links, f"nic{label}", npu, 1, 1, batch)
            for links in ([link] for link in links_in) if per_link else [links_in]:
                label = f"-from-{topo.links[links[0]].src}" if per_link else ""
                self._add_ejection_port(router, links, f"to-nic{label}", npu, 1, 1)
        for router in self.routers:
            if params.whole_packets:  # packets granted whole share crossbar inputs and links (crossbar.py)
                for port in router.inputs:
                    port.slots = Slots(1)
                for out in router.outputs:
                    out.slots = Slots(out.cpf)
                    out.lookahead = out.credit_horizon - 1  # (NEVER at a NIC: its credits are all known)
            options = {"router_latency": self.config.router_latency} if self.model.name == "booksim" else {}
            # (batches ask the routing unit for any packet's output early: only units that look it up allow them)
            router.allocator = self.model(router, self.routing, params.whole_packets, batch and self.routing.lookup,
                                          **options)
        if params.whole_packets:
            for injector in self.injectors:
                injector.out.lookahead = injector.out.credit_horizon - 1

    def _connect(self, out: OutputUnit, port: InputUnit, router: Router, sa_stage: int) -> None:
        """Wire output unit `out` (of a router, `sa_stage` 1, or a NIC, 0) to input unit `port` of
        `router` with the timing of the router model (see allocators/base.py)."""
        stage = self.model.stage(router.pipeline, self.config.router_latency)
        out.connect(port, delay=out.lat + stage, credit_delay=out.latency + sa_stage,
                    head_delay=out.lat + router.pipeline, stage=stage)

    def _add_injection_port(self, router: Router, links: list[int], name: str, npu: int, latency: int,
                            cpf: int, batch: bool) -> OutputUnit:
        """A NIC injection port of NPU `npu` into `router`, for the routes leaving over `links`."""
        injector = Injector(self, batch)
        port = InputUnit(router, name, self.config.vcs, self.params.nic_buffer_flits(router.node, latency, cpf), -1)
        injector.out = OutputUnit(injector, self.clock, f"nic-{npu}{name[3:]}", -1, cpf, latency,
                                  self.params.release_on_sent)
        self._connect(injector.out, port, router, sa_stage=0)
        router.add_input(port)
        self.injectors.append(injector)
        self.nic_ports.append((npu, "nic-npu", links[0] if len(links) == 1 else -1, injector.out))
        self._injector_of.update(dict.fromkeys(links, injector))
        self._nic_of.setdefault(npu, [None, None])[0] = injector
        return injector.out

    def _add_ejection_port(self, router: Router, links: list[int], name: str, npu: int, latency: int,
                           cpf: int) -> OutputUnit:
        """A NIC ejection port of NPU `npu` out of `router`, for the routes arriving over `links`."""
        receiver = Receiver(self)
        eject = OutputUnit(router, self.clock, name, -1, cpf, latency, self.params.release_on_sent)
        # a flit arrives after the link, the NIC consumes it (a cycle later in BookSim's model), and
        # its credit is usable after one cycle more and the link back
        credit_delay = eject.lat + self.model.eject_consume + 1 + latency
        eject.connect_nic(receiver, self.config.vcs, self.params.nic_eject_flits(credit_delay), credit_delay)
        router.add_output(eject)
        self.receivers.append(receiver)
        self.nic_ports.append((npu, "npu-nic", links[0] if len(links) == 1 else -1, eject))
        self._eject_of.update(dict.fromkeys(links, eject))
        self._nic_of.setdefault(npu, [None, None])[1] = eject
        return eject

    def buffer_depths(self):
        """(port name, flits per VC) of every router input port and NIC ejection port."""
        for router in self.routers:
            for port in router.inputs:
                yield f"router {router.node} in-port {port.name}", port.depth
            for out in router.outputs:
                if out.ejects:
                    yield f"router {router.node} NIC port {out.name}", out.depth

    def route(self, src: int, dst: int, ties: int = 0) -> tuple[dict, int, int, Injector, frozenset]:
        """(router id -> (output unit, VC lo, VC hi), router-to-router hops, NIC cycles, injection
        port, dimensions crossed) of src -> dst with tie bits `ties` (`Topology.route`), built once
        (routes.py)."""
        return self.routes.route(src, dst, ties)

    def hop_entry(self, link_id: int, index: int, count: int) -> tuple:
        """The route entry of a hop over router-to-router link `link_id` in VC class `index` of `count`."""
        return self.routes.hop_entry(link_id, index, count)

    def path_links(self, path) -> list[int]:
        """The link ids along node path `path`."""
        return self.topology.link_ids(path)

    def path_table(self, link_ids: list[int], classes, dst: int | None) -> tuple[dict, int]:
        """(route table, router-to-router hops) of a route, or of one phase of it, over `link_ids`,
        hop i in VC class `classes[i]` ((index, count), one per link; those of NIC links unused);
        with `dst`, ending at that NPU's NIC (routing units that build a packet's own route)."""
        return self.routes.path_table(link_ids, classes, dst)

    def sibling(self, topology: Topology) -> GarnetNetwork:
        """A network of this one's settings on `topology`, in the same simpy Environment (quotient.py)."""
        return GarnetNetwork(topology, self.env, self.config, **self._options)

    def route_ports(self, src: int, dst: int) -> tuple[list[int], list[int], list[tuple]]:
        """The route src -> dst as (its link ids, each one's VC class, and per router on it the input
        unit it arrives on and the output unit it leaves on); for deterministic routes (quotient.py)."""
        links = self.topology.link_ids(self.topology.route(src, dst))
        ports = [self._injector_of[links[0]].out.dst_port]
        ports += [self.link_units[link].dst_port for link in links]
        outs = [self.link_units[link] for link in links] + [self._eject_of[links[-1]]]
        return links, self.routing.hop_classes(links), list(zip(ports, outs))

    def run(self, until: float | None = None, monitor=None) -> bool:
        """Network.run, telling the clock where the run ends: it runs cycles (and fast-forwards)
        without simpy events, so it must not go past `until` on its own."""
        self.limit_clock(math.inf if until is None else until)
        try:
            return super().run(until, monitor)
        finally:
            self.limit_clock(math.inf)

    def limit_clock(self, until: float) -> None:
        """The time this network's clock may not run past on its own, nor its quotient's (quotient.py)."""
        self.clock.limit = until
        if self.quotient is not None:
            self.quotient.network.limit_clock(until)

    # ------------------------------------------------------------------ traffic
    def _transmit(self, src: int, dst: int, nbytes: int, tag: Hashable, notify: bool) -> simpy.Event | None:
        handed_off = self.env.event() if notify else None  # (no event: the NIC need not tell when it left)
        if src == dst:
            self.env.timeout(0).callbacks.append(lambda _e: self.deliver(src, dst, tag, nbytes))
            if notify:
                handed_off.succeed()
            return handed_off
        self.send_message(src, dst, nbytes, tag, self.packet_bytes, handed_off, self._delivered)
        return handed_off

    def send_message(self, src: int, dst: int, nbytes: int, tag: Hashable, packet_bytes: int,
                     handed_off=None, on_delivered=None, cycle: int | None = None, delay: int = 0) -> Message:
        """Queue a message at `src`'s NIC now (through `sender`, as synthetic traffic does directly);
        `cycle`: the current cycle, from a caller stepped by the clock (else read from the clock);
        `delay`: cycles before the NIC may start it, beyond the topology's NIC latency. `nbytes`: a
        Python int (`Endpoint.send` makes it one), which the compiled build's typed code needs."""
        if self.quotient is not None:
            raise QuotientConflict(f"a message {src} -> {dst} outside the symmetric run folded onto a quotient")
        now = self.clock.now_cycle() if cycle is None else cycle
        return self.sender.send(src, dst, nbytes, tag, packet_bytes, handed_off, on_delivered, now, delay)

    def traffic_changed(self, message: Message | None = None) -> None:
        """Something happened to `message` (None: to traffic at large) that is not part of a steady state
        (fastforward.py, partitions.py): forget the probes it spoils."""
        if self.fast_forward is not None:
            self.fast_forward.changed(message)

    def _delivered(self, message: Message) -> None:
        self.deliver(message.src, message.dst, message.tag, message.nbytes)

    # ------------------------------------------------------------------ symmetric collectives (mirrored.py)
    @property
    def handed_off(self) -> simpy.Event:
        """What a mirrored send returns: an event fired already (no sender waits for its hand-off)."""
        if self._handed_off is None:
            self._handed_off = self.env.event()
            self._handed_off.succeed()
        return self._handed_off

    def uniform_orbit(self, pairs: list[tuple[int, int]], relabelling=None) -> MirroredOrbit | None:
        """The pairs one representative message stands for, when each pair's messages take one route
        and every pair's crosses as many routers and costs as many NIC cycles as the first pair's; else
        (routes chosen per packet or drawn per message: copies would go their own ways) None, as their
        copies would hardly arrive together. (`relabelling`, which the congestion-aware backend needs,
        is not: copies run through routers of their own and their arrivals are compared.)"""
        if not self.routing.periodic:
            return None
        if self._message_paths is None:
            self._message_paths = MessagePaths(self.topology, 0, self.config.routing)
        if any(self._message_paths.per_message(src, dst) for src, dst in pairs):
            return None
        routes = [self.route(src, dst) for src, dst in pairs]
        if any(route[1:3] != routes[0][1:3] for route in routes):
            return None
        return MirroredOrbit(pairs, routes)

    def mirror(self, orbits: list[MirroredOrbit]) -> bool:
        """Run these orbits from now on (always possible): on a quotient of the torus where the first
        symmetric run's orbits fold (quotient.py), else with every copy sent."""
        if self.quotient is not None:
            self.quotient.admit(orbits)
        elif self.config.symmetry == "quotient" and not self._unfolded and not self.messages_sent:
            self.quotient = fold(self, orbits)
            self.limit_clock(self.clock.limit)  # (a run under way has set this network's)
        self._unfolded = self.quotient is None
        self.stands_for(max(len(orbit.pairs) for orbit in orbits))
        return True

    def send_mirrored(self, src: int, dst: int, nbytes: int, orbit: MirroredOrbit, arrived, receiver: int) -> None:
        """Send the representative's message src -> dst as a copy on every pair of `orbit`; call
        `arrived()` when the copy to `receiver` (the NPU whose endpoint it delivers to) arrives."""
        self.messages_sent += len(orbit.pairs)
        self.count_orbit_bytes(orbit.senders, (), nbytes)
        if self.quotient is not None:
            self.quotient.send(src, dst, nbytes, orbit, lambda: self._orbit_arrived(orbit, nbytes, arrived), receiver)
            return
        copies = MirroredSend(receiver, orbit, nbytes, arrived)
        packet_bytes, delivered = self.packet_bytes, self._copy_delivered
        now = self.clock.now_cycle()
        self.traffic_changed()
        for (copy_src, copy_dst), route in zip(orbit.pairs, orbit.routes):  # as send_message sends each
            route[3].submit(Message(copy_src, copy_dst, route, copies, nbytes, packet_bytes, now, now + route[2], None,
                                    delivered))

    def _orbit_arrived(self, orbit: MirroredOrbit, nbytes: int, arrived) -> None:
        """Every copy of a message of `orbit` arrived (in the quotient, as their images did)."""
        self.messages_delivered += len(orbit.pairs)
        self.count_orbit_bytes((), orbit.receivers, nbytes)
        arrived()

    def _copy_delivered(self, message: Message) -> None:
        copies = message.tag
        if copies.check(message.src, message.dst, self.clock.cycle):  # the first copy: count them all
            self.messages_delivered += len(copies.orbit.pairs)
            self.count_orbit_bytes((), copies.orbit.receivers, copies.nbytes)
        if message.dst == copies.receiver:
            copies.arrived()

    # ------------------------------------------------------------------ progress, invariants
    def _after_cycle(self, cycle: int) -> None:
        """After a busy cycle: invariants (if on), deadlock detection and fast-forward probes. It
        has the clock call it again after the next cycle that needs one of them, or that leaves the
        calendar empty (a deadlock if packets are still in the network)."""
        if self.check_invariants:
            self.check_flow_control()
        if self.packets_in_network and not self.clock.due:
            stalled = cycle - max(r.last_move for r in self.routers)
            raise deadlock.deadlock_error(self.routers, cycle, stalled, self.flits_in_flight())
        if cycle >= self.next_scan:
            self._next_scan_after(cycle)
            self._scan(cycle)
        if self.fast_forward is not None:
            self.fast_forward.after_cycle(cycle)
        self.clock.hook_at = 0 if self.check_invariants else self.next_scan  # a probe due sets it to now

    def _scan(self, cycle: int) -> None:
        """Periodic check for routers that have held ready flits for `deadlock_cycles` without
        sending one: if no router at all has moved since, or such routers wait on each other in a
        cycle, it is a deadlock (raised); if the rest of the network keeps moving it is starvation
        by congestion, reported once per router as a warning and the run goes on."""
        limit = cycle - self.config.deadlock_cycles
        stuck = [router for router in self.routers
                 if router.last_move <= limit and any(vc.ready and vc.ready[0] <= limit for vc in router.occupied)]
        if not stuck:
            return
        if max(router.last_move for router in self.routers) <= limit:
            raise deadlock.deadlock_error(self.routers, cycle, cycle - max(r.last_move for r in self.routers),
                                          self.flits_in_flight())
        loop = deadlock.waiting_cycle(self.routers, cycle, limit)
        if loop:
            raise deadlock.deadlock_error(self.routers, cycle, cycle - stuck[0].last_move, self.flits_in_flight(),
                                          stuck[0], loop)
        for router in stuck:
            if router.node not in self._starved:
                self._starved.add(router.node)
                self.warnings.append(deadlock.starvation_warning(router, cycle))

    def skip_deadlock_scans(self, cycle: int) -> None:
        """A fast-forward has just ended at busy `cycle`: the scans it skipped found nothing (the
        network kept moving), and the last of them set the next on the grid."""
        if self.next_scan <= cycle:
            self._next_scan_after(cycle)

    def _next_scan_after(self, cycle: int) -> None:
        """Deadlock scans run on a fixed grid, so that a fast-forward can tell where it is."""
        self.next_scan = (cycle // self.scan_every + 1) * self.scan_every

    def flits_in_flight(self) -> int:
        """Flits in router buffers or on links towards them (NIC source queues excluded)."""
        return sum(len(vc.ready) for router in self.routers for vc in router.occupied)

    def output_units(self):
        """Every output unit: router links, NIC injection and ejection ports."""
        for router in self.routers:
            yield from router.outputs
        for injector in self.injectors:
            yield injector.out

    def check_flow_control(self) -> None:
        """For every downstream VC: credits + credits on their way back + flits held or on the wire
        (or committed to leave later, by a batch) == depth; at this cycle no VC holds more flits
        than its depth, nor was a credit used before it came back; and its flits left it in order
        (the credits on their way back are sorted)."""
        cycle = self.clock.cycle
        for out in self.output_units():
            for vc, credits in enumerate(out.credits):
                returning = out.pending[vc].to_list()
                if any(earlier > later for earlier, later in zip(returning, returning[1:])):
                    raise InvariantError(f"{self._downstream_vc(out, vc)} at cycle {cycle}: credits on their way "
                                         "back out of order (flits left the VC out of order)")
                held = len(out.dst_vcs[vc].ready) if not out.ejects else 0
                if credits + len(returning) + held == out.depth and credits >= 0 and held <= out.depth:
                    continue  # the usual case; else look closer (a batch may hold future credits)
                if not out.ejects:  # flits that leave here after this cycle (perhaps already
                    # passed on downstream in packet fidelity) do not count yet
                    later = sum(1 for t in out.last_sent[vc].to_list() if t > cycle)
                else:
                    later = sum(1 for t in returning if t > cycle + out.eject_credit_delay)
                usable = credits + sum(1 for t in returning if t <= cycle) + later
                if credits + len(returning) + held != out.depth or usable < 0 or usable > out.depth:
                    raise InvariantError(f"{self._downstream_vc(out, vc)} at cycle {cycle}: credits "
                                         f"{credits} + returning {len(returning)} + flits {held} vs depth "
                                         f"{out.depth}, {usable} usable")

    @staticmethod
    def _downstream_vc(out: OutputUnit, vc: int) -> str:
        """Names downstream VC `vc` of output unit `out` in an invariant error."""
        node = out.owner.node if out.ejects else out.dst_router.node
        return f"{out.name} towards router {node} VC {vc}"

    def check_drained(self) -> None:
        """At the end of a run: no flit anywhere, all credits home, every byte delivered exactly once."""
        if self.quotient is not None:
            self.quotient.network.check_drained()
        self.check_flow_control()
        if self.packets_in_network or self.flits_in_flight():
            raise InvariantError(f"{self.packets_in_network} packets still in the network")
        for out in self.output_units():
            for vc in range(len(out.credits)):
                if out.credits[vc] + len(out.pending[vc]) != out.depth or out.in_use[vc]:
                    raise InvariantError(f"{out.name}: VC {vc} not released at the end")
        if sum(self.bytes_sent) != sum(self.bytes_received):
            raise InvariantError(f"{sum(self.bytes_sent)} bytes sent, {sum(self.bytes_received)} received")
        if self.messages_sent != self.messages_delivered:
            raise InvariantError(f"{self.messages_sent} messages sent, {self.messages_delivered} delivered")

    # ------------------------------------------------------------------ statistics
    def link_counters(self) -> tuple[array, array]:
        """Cumulative (bytes, busy ns) per link, read straight off the output ports (microseconds,
        where building link_stats() takes a millisecond): what time series sampling reads."""
        # a flit is counted when sent, but a step may send flits that leave in later cycles, and the
        # clock may have run cycles past simpy's time: without that part a sampling interval could
        # hold more busy time than it lasts
        observed = self.observed
        return link_counters(observed.link_units, self.env.now * self.clock.clock_ghz, observed.clock)

    def link_columns(self) -> dict[str, list]:
        link_bytes, busy_ns = self.link_counters()
        return self.link_table(link_bytes, busy_ns, extra=link_extra(self))

    def stats(self) -> dict[str, pd.DataFrame]:
        import pandas as pd

        frames = super().stats()
        frames["nic_links"] = nic_frame(self)
        frames["vcs"] = vc_frame(self)
        observed = self.observed
        packet_stats = observed.packet_stats
        summary = packet_stats.summary()
        summary["cycles"] = self.clock.now_cycle()
        summary["events"] = observed.clock.steps
        frames["packets"] = pd.DataFrame([summary])
        if packet_stats.histogram:
            frames["packet_latency"] = pd.DataFrame(latency_table(packet_stats.histogram))
        return frames

    @property
    def observed(self):
        """What the statistics read (link and NIC units, VCs, packets, the clock that stepped them): this
        network, or the quotient that ran its traffic, read onto its links (quotient.py)."""
        return self if self.quotient is None else self.quotient

    def vc_ports(self) -> list[tuple]:
        """(router, input unit, its VCs) of every input port: the rows of the VC table."""
        return [(router.node, port, port.vcs) for router in self.routers for port in router.inputs]

    def events_so_far(self) -> int:
        """simpy events plus the cycle clock's component steps (which run without simpy events),
        also under `env.run` (synthetic traffic)."""
        return self.events + self.observed.clock.steps

    @property
    def packets_in_network(self) -> int:
        """Packets cut from their messages that have not arrived (the packet statistics count both)."""
        packet_stats = self.observed.packet_stats
        return packet_stats.cut - packet_stats.packets

    def fast_forward_figures(self) -> dict:
        """What the steady-state fast-forward did (summary.json's `fast_forward`): whether it was on and
        which (`mode`), the cycles simulated, how many it skipped and in how many jumps; per partition,
        the partitions found and the cycles they lived, summed, of which `skipped_cycles` were skipped
        (`skipped_share`: of the cycles simulated, for the whole network)."""
        if self.quotient is not None:
            return self.quotient.network.fast_forward_figures()
        ff = self.fast_forward
        cycles = self.clock.now_cycle()
        figures = {"on": ff is not None, "mode": self.config.fast_forward if ff else "off", "cycles": cycles,
                   "skipped_cycles": ff.skipped_cycles if ff else 0, "skips": ff.skips if ff else 0}
        if isinstance(ff, PartitionForward):  # (skipped_cycles: partition-cycles, of partition_cycles in all)
            figures.update(partitions=ff.partitions_found, partition_cycles=ff.partition_cycles())
        lived = figures.get("partition_cycles", cycles)
        figures["skipped_share"] = figures["skipped_cycles"] / lived if lived else 0.0
        return figures

    def flit_hops(self) -> int:
        """Router-to-router flit traversals so far (the benchmark's unit of work)."""
        return sum(o.flits for o, inner in zip(self.observed.link_units, self.between_routers) if inner)

    def folded_to(self) -> list[int] | None:
        """NPUs per dimension of the quotient that ran this network's traffic (summary.json), or None."""
        return None if self.quotient is None else list(self.quotient.sizes)
