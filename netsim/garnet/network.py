"""GarnetNetwork: the packet backend behind the NetworkAPI, flit-accurate (`fidelity = "flit"`)
or moving packets as units with virtual cut-through (`fidelity = "packet"`: a packet needs credits
for all its flits at the next VC, holds the link for its flit count; valid when every VC buffer
holds a whole packet). Both keep the router pipeline, link latencies, VCs, dateline classes, atomic
VC allocation, statistics and invariant checks; zero-load latency is the same closed form.

Every topology node is a `Router`; every NPU also has a NIC: an `Injector` per injection port and a
`Receiver` per ejection port of its router, one of each per router link (`nic_ports = "per-link"`)
or one of each for all links (`"single"`). Time runs in integer cycles of `clock_ghz` on a `CycleClock` that
shares the simpy Environment (nanoseconds) with the system layer.

Zero-load latency of one packet of L flits over H router-to-router links (documented closed form,
checked by the tests), from the cycle its head leaves the NIC to the cycle its tail reaches the
destination NIC:

    1 (injection link) + sum of pipeline cycles of the H+1 routers visited
    + sum over the H links of (latency + cpf - 1) + 1 (ejection link)
    + (L - 1) * (largest cpf on the route, NIC links counting 1)

where cpf is a link's cycles per flit. A message is injected at the first whole cycle at or after
its send (plus the topology's NIC latency, twice per dimension crossed, as in the analytical model)
and delivered when its last tail arrives.

Long messages on uncontended paths reach a steady state that repeats every few cycles; the
network skips whole repetitions of it (fastforward.py: the same statistics as without, which tests
compare with `fast_forward=False`), so a 1 GiB ring all-reduce costs about as much as its transients.
"""

from __future__ import annotations

import math
from typing import Hashable

import pandas as pd
import simpy

from netsim.api import Network
from netsim.errors import ConfigError
from netsim.garnet import deadlock
from netsim.garnet.clock import CycleClock
from netsim.garnet.config import GarnetConfig
from netsim.garnet.fastforward import FastForward
from netsim.garnet.link import OutputPort
from netsim.garnet.nic import Injector, Receiver
from netsim.garnet.packet import Message, Packet
from netsim.garnet.params import Params
from netsim.garnet.router import InputPort, Router
from netsim.garnet.routing import ANY, HIGH, LOW, check_vcs, hop_classes, ring_links, vc_range
from netsim.garnet.stats import PacketStats, link_extra, nic_frame, vc_frame
from netsim.topology import Topology


class InvariantError(AssertionError):
    """A flow-control invariant was broken: a bug in the backend, never the user's fault."""


class GarnetNetwork(Network):
    """Routers, links and NICs built from a Topology and the `[garnet]` table."""

    backend_name = "garnet"

    def __init__(self, topology: Topology, env: simpy.Environment | None = None, config=None, *,
                 check_invariants: bool = False, dateline: bool = True, seed: int = 0, batch: bool = True,
                 fast_forward: bool = True):
        """`config`: a NetworkConfig (its `garnet` table is used) or a GarnetConfig.

        `seed` is accepted like every backend's; this one has no random choices (routes are
        deterministic and arbitration is round-robin), so the seed cannot change its results.

        `check_invariants` checks credits and buffers after every busy cycle (tests); `dateline=False`
        is a test-only switch that lets ring hops use any VC (and so deadlock); `batch=False` is a
        test-only switch that makes flit fidelity step every flit (batching must not change results);
        `fast_forward=False` turns off skipping repeated steady states (fastforward.py; same statistics).
        """
        super().__init__(topology, env)
        cfg = getattr(config, "garnet", config) or GarnetConfig()
        self.config = cfg
        self.params = params = Params(cfg, topology)
        check_vcs(topology, params.vcs, dateline)
        self.check_invariants = check_invariants
        self.flit_bytes = params.flit_bytes
        self.packet_bytes = params.packet_bytes
        self.clock = CycleClock(self.env, cfg.clock_ghz)
        self.clock.after_cycle = self._after_cycle
        self._build(batch)
        params.check_whole_packets(self.packet_bytes, self.buffer_depths())
        self._routes: dict[int, tuple] = {}  # route() by src * npus + dst (an int key hashes fastest)
        self._ring_links = ring_links(topology, dateline)
        # What route() assembles tables from, so that building one (for every pair a run uses) is
        # mostly lookups: per link id, the route entry of a hop over it by VC class (ANY = -1 is
        # the last item), and the link's dimension; NIC cycles per set of dimensions crossed.
        self._hop_entries = [[(out, *vc_range(vc_class, len(out.credits))) for vc_class in (LOW, HIGH, ANY)]
                             for out in self.link_ports]
        self._link_dims = [link.dim for link in topology.links]
        self._nic_cycles: dict[frozenset, int] = {}
        self.packet_stats = PacketStats()
        self.packet_observer = None  # optional callable(packet, cycle) for synthetic traffic
        self.packets_in_network = 0
        self.scan_every = max(1, cfg.deadlock_cycles // 4)
        self.next_scan = cfg.deadlock_cycles
        self.fast_forward = FastForward(self) if fast_forward else None

    # ------------------------------------------------------------------ construction
    def _build(self, batch: bool) -> None:
        topo, params, clock = self.topology, self.params, self.clock
        release_on_sent = params.release_on_sent
        # Batching an unobstructed packet is exact only if the downstream VC cannot be reallocated
        # before the tail would have left flit by flit, i.e. under tail-credit release.
        batch = batch and not release_on_sent
        self.routers = [Router(clock, node, params.pipeline(node), params.whole_packets, batch)
                        for node in sorted(topo.graph.nodes)]
        if [r.node for r in self.routers] != list(range(len(self.routers))):
            raise ConfigError(f"topology '{topo.name}': node ids must be 0..n-1")
        self.ports: dict[tuple[int, int], OutputPort] = {}
        self.link_ports: list[OutputPort] = []
        for link, latency, cpf in zip(topo.links, params.link_latency, params.link_cpf):
            up, down = self.routers[link.src], self.routers[link.dst]
            depth = params.buffer_flits(link.dst, link.dim, latency, cpf)
            port = InputPort(f"from-{link.src}", params.vcs(link.dim), depth, latency, link.id)
            out = OutputPort(up, clock, f"to-{link.dst}", link.id, cpf, latency, release_on_sent)
            out.connect(down, port)
            down.add_input(port)
            up.outputs.append(out)
            self.ports[link.src, link.dst] = out
            self.link_ports.append(out)
        self.injectors: list[Injector] = []  # every NIC injection port
        self.receivers: list[Receiver] = []  # one per ejection port
        self.nic_ports: list[tuple[int, str, int, OutputPort]] = []  # (npu, kind, link id, port) for the report
        self._injector_of: dict[int, Injector] = {}  # first link of a route -> its injection port
        self._eject_of: dict[int, OutputPort] = {}  # last link of a route -> its ejection port
        # per-link: one injection port per outgoing link and one ejection port per incoming link, so
        # an NPU drives all its links at once (as the analytical model assumes); single: one of each,
        # shared by all links (Garnet's and BookSim's NI: one flit per cycle in and out of an NPU).
        per_link = self.config.nic_ports == "per-link"
        for npu in range(topo.npus):
            router = self.routers[npu]
            links_out = [out.link_id for out in router.outputs]  # read before NIC ports join them
            links_in = [port.link_id for port in router.inputs]
            for links in ([link] for link in links_out) if per_link else [links_out]:
                self._add_injection_port(router, links, f"-to-{topo.links[links[0]].dst}" if per_link else "",
                                         batch)
            for links in ([link] for link in links_in) if per_link else [links_in]:
                self._add_ejection_port(router, links, f"-from-{topo.links[links[0]].src}" if per_link else "")

    def _add_injection_port(self, router: Router, links: list[int], label: str, batch: bool) -> None:
        """A NIC injection port of NPU `router.node` for the routes leaving over `links`."""
        npu = router.node
        injector = Injector(self, batch)
        port = InputPort(f"nic{label}", self.config.vcs, self.params.nic_buffer_flits(npu), 1, -1)
        injector.out = OutputPort(injector, self.clock, f"nic-{npu}{label}", -1, 1, 1, self.params.release_on_sent)
        injector.out.connect(router, port)
        router.add_input(port)
        self.injectors.append(injector)
        self.nic_ports.append((npu, "nic-npu", links[0] if len(links) == 1 else -1, injector.out))
        self._injector_of.update(dict.fromkeys(links, injector))

    def _add_ejection_port(self, router: Router, links: list[int], label: str) -> None:
        """A NIC ejection port of NPU `router.node` for the routes arriving over `links`."""
        receiver = Receiver(self)
        eject = OutputPort(router, self.clock, f"to-nic{label}", -1, 1, 1, self.params.release_on_sent)
        eject.eject = True
        eject.receiver = receiver
        router.outputs.append(eject)
        self.receivers.append(receiver)
        self.nic_ports.append((router.node, "npu-nic", links[0] if len(links) == 1 else -1, eject))
        self._eject_of.update(dict.fromkeys(links, eject))

    def buffer_depths(self):
        """(port name, flits per VC) of every router input port."""
        for router in self.routers:
            for port in router.inputs:
                yield f"router {router.node} in-port {port.name}", port.depth

    def route(self, src: int, dst: int) -> tuple[dict, int, int, Injector]:
        """(router id -> (output port, VC lo, VC hi), hops, NIC cycles, injection port) of src -> dst,
        built once."""
        key = src * self.topology.npus + dst
        entry = self._routes.get(key)
        if entry is None:
            if src == dst:  # callers deliver these themselves (`_transmit`); synthetic traffic skips them
                raise ValueError(f"no network route from NPU {src} to itself")
            path = self.topology.route(src, dst)
            link_ids = [self.ports[hop].link_id for hop in zip(path, path[1:])]
            hops = self._hop_entries
            table = {u: hops[link_id][vc_class]
                     for u, link_id, vc_class in zip(path, link_ids, hop_classes(self._ring_links, link_ids))}
            table[dst] = (self._eject_of[link_ids[-1]], 0, 1)
            dims = frozenset(self._link_dims[link_id] for link_id in link_ids)
            nic_cycles = self._nic_cycles.get(dims)
            if nic_cycles is None:
                nic_cycles = self._nic_cycles[dims] = self.params.nic_cycles(dims)
            entry = (table, len(path) - 1, nic_cycles, self._injector_of[link_ids[0]])
            self._routes[key] = entry
        return entry

    def run(self, until: float | None = None, monitor=None) -> bool:
        """Network.run, telling the clock where the run ends: it runs cycles (and fast-forwards)
        without simpy events, so it must not go past `until` on its own."""
        self.clock.limit = math.inf if until is None else until
        try:
            return super().run(until, monitor)
        finally:
            self.clock.limit = math.inf

    # ------------------------------------------------------------------ traffic
    def _transmit(self, src: int, dst: int, nbytes: int, tag: Hashable) -> simpy.Event:
        handed_off = self.env.event()
        if src == dst:
            self.env.timeout(0).callbacks.append(lambda _e: self.deliver(src, dst, tag, nbytes))
            handed_off.succeed()
            return handed_off
        self.send_message(src, dst, nbytes, tag, self.packet_bytes, handed_off, self._delivered)
        return handed_off

    def send_message(self, src: int, dst: int, nbytes: int, tag: Hashable, packet_bytes: int,
                     handed_off=None, on_delivered=None, cycle: int | None = None) -> Message:
        """Queue a message at `src`'s NIC now (also used by synthetic traffic, without an endpoint);
        `cycle`: the current cycle, from a caller stepped by the clock (else read from the clock)."""
        now = self.clock.now_cycle() if cycle is None else cycle
        route = self.route(src, dst)
        message = Message(src, dst, route, tag, nbytes, packet_bytes, now, now + route[2], handed_off, on_delivered)
        self.traffic_changed()
        route[3].submit(message)
        return message

    def cut_packet(self, message: Message, cycle: int) -> Packet:
        """The NIC takes the next packet of `message`."""
        nbytes = min(message.unsent, message.packet_bytes)
        message.unsent -= nbytes
        message.packets_out += 1
        route, _, _, injector = message.route
        nflits = self.params.packet_flits(nbytes)
        self.packets_in_network += 1
        if not message.unsent:
            self.traffic_changed()
        elif self.fast_forward is not None:
            self.fast_forward.cut(injector)
        return Packet(message, nflits, nbytes, route, message.unsent == 0)

    def packet_arrived(self, packet: Packet, cycle: int) -> None:
        """A tail flit reached its NIC: count the packet; complete its message if it was the last."""
        self.packets_in_network -= 1
        latency = self.packet_stats.add(packet, cycle)
        if self.fast_forward is not None:
            self.fast_forward.arrived(latency)
        if self.packet_observer is not None:
            self.packet_observer(packet, cycle)
        message = packet.msg
        message.packets_out -= 1
        if self.check_invariants and message.packets_out < 0:
            raise InvariantError(f"message {message.src}->{message.dst} tag {message.tag}: packet arrived twice")
        if message.packets_out == 0 and message.unsent == 0 and message.on_delivered is not None:
            self.traffic_changed()
            message.on_delivered(message)

    def traffic_changed(self) -> None:
        """Something happened that is not part of a steady state (fastforward.py): forget its probes."""
        if self.fast_forward is not None:
            self.fast_forward.reset()

    def _delivered(self, message: Message) -> None:
        self.deliver(message.src, message.dst, message.tag, message.nbytes)

    # ------------------------------------------------------------------ progress, invariants
    def _after_cycle(self, cycle: int) -> None:
        """After a busy cycle: invariants (if on), deadlock detection and fast-forward probes. It
        has the clock call it again after the next cycle that needs one of them, or that leaves the
        calendar empty (a deadlock if packets are still in the network)."""
        if self.check_invariants:
            self.check_flow_control()
        if self.packets_in_network and not self.clock.buckets:
            stalled = cycle - max(r.last_move for r in self.routers)
            raise deadlock.deadlock_error(self.routers, cycle, stalled, self.flits_in_flight())
        if cycle >= self.next_scan:
            self._next_scan_after(cycle)
            limit = cycle - self.config.deadlock_cycles
            for router in self.routers:  # holds flits ready long ago, and has not sent one since
                if router.last_move <= limit and any(vc.ready and vc.ready[0] <= limit for vc in router.active):
                    moved = max(other.last_move for other in self.routers) > limit
                    raise deadlock.deadlock_error(self.routers, cycle, cycle - router.last_move,
                                                  self.flits_in_flight(), router if moved else None)
        if self.fast_forward is not None:
            self.fast_forward.after_cycle(cycle)
        self.clock.hook_at = 0 if self.check_invariants else self.next_scan  # a probe due sets it to now

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
        return sum(len(vc.ready) for router in self.routers for vc in router.active + router.joining)

    def check_flow_control(self) -> None:
        """Credits + returning credits + flits held (or on the wire) == depth, for every VC."""
        for out in self.link_ports + [injector.out for injector in self.injectors]:
            for vc, buffer in enumerate(out.dst_vcs):
                held = len(buffer.ready)
                total = out.credits[vc] + len(out.pending[vc]) + held
                if total != out.depth or held > out.depth or out.credits[vc] < 0:
                    raise InvariantError(f"{out.name} of router {out.dst_router.node} VC {vc}: credits "
                                         f"{out.credits[vc]} + returning {len(out.pending[vc])} + flits {held} "
                                         f"!= depth {out.depth}")

    def check_drained(self) -> None:
        """At the end of a run: no flit anywhere, all credits home, every byte delivered exactly once."""
        self.check_flow_control()
        if self.packets_in_network or self.flits_in_flight():
            raise InvariantError(f"{self.packets_in_network} packets still in the network")
        for out in self.link_ports + [injector.out for injector in self.injectors]:
            for vc in range(len(out.credits)):
                if out.credits[vc] + len(out.pending[vc]) != out.depth or out.allocated[vc] and not out.tail_sent[vc]:
                    raise InvariantError(f"{out.name}: VC {vc} not released at the end")
        if sum(self.bytes_sent) != sum(self.bytes_received):
            raise InvariantError(f"{sum(self.bytes_sent)} bytes sent, {sum(self.bytes_received)} received")
        if self.messages_sent != self.messages_delivered:
            raise InvariantError(f"{self.messages_sent} messages sent, {self.messages_delivered} delivered")

    # ------------------------------------------------------------------ statistics
    def link_counters(self) -> tuple[list, list]:
        """Cumulative (bytes, busy ns) per link, read straight off the output ports (microseconds,
        where building link_stats() takes a millisecond): what time series sampling reads."""
        ns = self.clock.ns
        ports = self.link_ports
        return [o.bytes for o in ports], [ns(o.flits * o.cpf) for o in ports]

    def link_stats(self) -> pd.DataFrame:
        link_bytes, busy_ns = self.link_counters()
        return self.link_frame(link_bytes, busy_ns, extra=link_extra(self))

    def stats(self) -> dict[str, pd.DataFrame]:
        frames = super().stats()
        frames["nic_links"] = nic_frame(self)
        frames["vcs"] = vc_frame(self)
        summary = self.packet_stats.summary()
        summary["cycles"] = self.clock.now_cycle()
        summary["events"] = self.clock.steps
        frames["packets"] = pd.DataFrame([summary])
        if self.packet_stats.histogram:
            frames["packet_latency"] = pd.DataFrame(sorted(self.packet_stats.histogram.items()),
                                                    columns=["latency_cycles", "packets"])
        return frames

    def events_so_far(self) -> int:
        """simpy events plus the cycle clock's component steps (which run without simpy events),
        also under `env.run` (synthetic traffic)."""
        return self.events + self.clock.steps

    def flit_hops(self) -> int:
        """Router-to-router flit traversals so far (the benchmark's unit of work)."""
        return sum(o.flits for o in self.link_ports)
