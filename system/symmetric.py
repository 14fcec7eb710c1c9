"""Symmetric collectives: simulate one representative NPU and mirror it onto the other members.

When every member of a communicator issues the same collective at the same moment, before the
simulation runs and with no other collective in flight on them (and, on the congestion-aware
backend, no other message on the network: it refuses one sent meanwhile), every phase runs an
algorithm that treats all ranks alike under a group of relabellings of the ranks (cyclic shifts: ring, direct,
dissemination; XOR on a power of two: halving-doubling, recursive doubling), and the network is
unchanged by those relabellings (message costs checked exactly, pair by pair, before the collective
starts; on the congestion-aware backend, where messages meet on links, also every route and link,
and the communicator must span every NPU), then every member follows the representative's
timeline. So only the representative (rank 0) runs: a message it expects from rank x is the
mirror image of one it sends itself (to g(0), where the relabelling g takes x to 0) and arrives
after that message's cost; every member's record shows its phases as they run, and the network
counts every member's traffic from the representative's, per orbit of (sender, receiver) pairs.
On the packet backend (`mirrors == "copies"`) every member's copy of each message is still sent
through the routers, and the run is exact while all copies of a message arrive in one cycle, which
the backend checks as they arrive (netsim.garnet.shortcuts.mirrored; the runner simulates again per message
otherwise).

`collective-simulation = "per-message"` turns this off (every NPU runs every message, the
reference); so does anything the check cannot prove symmetric (trees, non-power-of-two
halving-doubling, payload verification, unequal or staggered issues, a backend whose messages
interact).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Hashable

import simpy

from netsim.errors import ConfigError
from netsim.topology.base import coords_of, npu_of
from system.algorithms import resolve
from system.collectives import Communicator
from system.scheduler import GroupQueue


SYMMETRIC_OPS = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "barrier")  # no root


class Relabelling:
    """The group acting on a communicator's ranks, axis by axis (`cyclic` shifts or `xor` masks).

    Ranks are written as coordinates over the communicator's axes (its `sizes`, axis 0 fastest), the
    representative is rank 0, and g_x is the element taking rank 0 to rank x.
    """

    def __init__(self, comm: Communicator, actions: tuple, flat: bool):
        self.members = comm.members
        self.sizes = (len(comm.members),) if flat else comm.sizes
        self.actions = actions
        self.rank = {npu: rank for rank, npu in enumerate(self.members)}
        self._coords = [coords_of(rank, self.sizes) for rank in range(len(self.members))]

    def _apply(self, x: tuple, y: tuple) -> tuple:
        """g_x(y): y shifted (or XORed) by x on every axis."""
        return tuple((a + b) % s if act == "cyclic" else a ^ b for a, b, s, act in zip(x, y, self.sizes, self.actions))

    def orbit(self, dst: int) -> list[tuple[int, int]]:
        """Every member's image of the message representative -> `dst`: (g_x(rep), g_x(dst)) for all x."""
        y = self._coords[self.rank[dst]]
        return [(self.members[rank], self.members[npu_of(self._apply(x, y), self.sizes)])
                for rank, x in enumerate(self._coords)]

    def mirror_sender(self, dst: int) -> int:
        """The member x whose message to the representative mirrors the representative's message to `dst`:
        the relabelling that takes x to rank 0 takes rank 0 to `dst`."""
        y = self._coords[self.rank[dst]]
        x = tuple((-b) % s if act == "cyclic" else b for b, s, act in zip(y, self.sizes, self.actions))
        return self.members[npu_of(x, self.sizes)]

    def image(self, x: int, npu: int) -> int | None:
        """g_x(npu), where g_x takes the representative to member `x` (None: `npu` is not a member)."""
        rank = self.rank.get(npu)
        if rank is None:
            return None
        return self.members[npu_of(self._apply(self._coords[self.rank[x]], self._coords[rank]), self.sizes)]

    def relative(self, u: int, v: int) -> int:
        """g_u^-1(v): where member `v` lands when member `u` is taken to the representative."""
        a, b = self._coords[self.rank[u]], self._coords[self.rank[v]]
        return self.members[npu_of(tuple((bb - aa) % s if act == "cyclic" else aa ^ bb
                                         for aa, bb, s, act in zip(a, b, self.sizes, self.actions)), self.sizes)]

    def partners(self, algorithm_name: str, axis: int) -> list[tuple]:
        """Coordinates (other axes 0) of every rank the representative may send to on `axis` with the
        algorithm, as its registration declares them."""
        size = self.sizes[axis]
        offsets = resolve(algorithm_name)[0].partners(size)
        return [tuple(o if a == axis else 0 for a in range(len(self.sizes))) for o in offsets]


class RepresentativeEndpoint:
    """A representative NPU's NetworkAPI over its own endpoint: receives and timers as there; subclasses
    send messages that stand for other NPUs' too."""

    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.network = endpoint.network
        self.npu = endpoint.npu
        self.env = endpoint.env

    def now(self) -> float:
        return self.env.now

    def schedule(self, delay_ns: float, fn) -> None:
        self.endpoint.schedule(delay_ns, fn)

    def recv(self, src: int, nbytes: int, tag: Hashable) -> simpy.Event:
        return self.endpoint.recv(src, nbytes, tag)

    def send(self, dst: int, nbytes: int, tag: Hashable) -> simpy.Event:
        """Each subclass sends for the NPUs its representative stands for."""
        raise NotImplementedError

    def post(self, dst: int, nbytes: int, tag: Hashable) -> None:
        self.send(dst, nbytes, tag)  # (a subclass's send: its hand-off event is the network's shared one)


class MirrorEndpoint(RepresentativeEndpoint):
    """The representative's NetworkAPI: its sends are costed, counted for the whole orbit, and arrive
    back at itself as the mirrored messages of the other members."""

    def __init__(self, endpoint, relabelling: Relabelling, instance: "SymmetricInstance"):
        super().__init__(endpoint)
        self.relabelling = relabelling
        self.instance = instance

    def send(self, dst: int, nbytes: int, tag: Hashable) -> simpy.Event:
        orbit = self.instance.orbits.get(dst)
        if orbit is None:  # a registration's `partners` missed this destination: a bug, not a user error
            raise RuntimeError(f"symmetric collective: NPU {self.npu} sends to NPU {dst}, which its algorithm's "
                               f"declared partners do not include")
        sender = self.relabelling.mirror_sender(dst)
        endpoint = self.endpoint
        self.network.send_mirrored(self.npu, dst, nbytes, orbit, lambda: endpoint.deliver(sender, tag, nbytes),
                                   self.npu)
        return self.network.handed_off


class SoloScheduler:
    """The representative's own queues: each group queue has it as its only member (the others, in
    step with it, would start every phase when it does), and phase barriers do not wait."""

    def __init__(self, scheduler, npu: int):
        self.config = scheduler.config
        self.order = scheduler.order
        self.npu = npu
        self._queues: dict[tuple, GroupQueue] = {}

    def queue(self, group: tuple, chunk: int) -> GroupQueue:
        key = (group, chunk % self.config.queues_per_dimension)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = GroupQueue((self.npu,), self.config.active_chunks_per_dimension)
        return queue

    def barrier(self, env: simpy.Environment, key: Hashable, size: int) -> simpy.Event:
        event = env.event()
        event.succeed()
        return event


class SymmetricInstance:
    """One collective run by its representative: the orbits it sends on, the queues it runs in, and the
    event its end fires."""

    def __init__(self, representative: int, relabelling: Relabelling, orbits: dict, scheduler: SoloScheduler,
                 done: simpy.Event):
        self.representative = representative
        self.relabelling = relabelling
        self.orbits = orbits  # destination -> the orbit of (sender, receiver) pairs it stands for
        self.scheduler = scheduler  # the representative's queues (system.lockstep: shared by its collectives)
        self.done = done  # fires when the representative has finished
        self.chunks: list = []  # the representative's phase records per chunk, shared by every member's record


class SymmetricCollectives:
    """Shared by the Systems of one simulation: which collectives run as one representative.

    Every System reports its issues (`issued`) before its collective's process starts; each member's
    process asks `decide` as it starts, and the first one's answer holds for the whole collective.
    """

    def __init__(self, config, allowed: bool = True):
        self.enabled = allowed and config.collective_simulation == "symmetric"
        self.lockstep = None  # a system.lockstep.Lockstep while only representatives' whole runs are simulated
        self._issues: dict[Hashable, dict] = defaultdict(dict)  # (comm id, seq) -> {npu: signature}
        self._decided: dict[Hashable, list] = {}  # (comm id, seq) -> [instance or None, members still to ask]
        self._in_flight: dict[int, int] = defaultdict(int)  # NPU -> collectives issued and not finished
        self._symmetric_on: dict[int, SymmetricInstance] = {}  # NPU -> the symmetric collective running there

    def use_lockstep(self, lockstep) -> None:
        """From now on every collective runs as its representative's, as `lockstep` plans it."""
        self.lockstep = lockstep

    def issued(self, npu: int, key: Hashable, signature: tuple, network_running: bool) -> None:
        if self.lockstep is not None:  # every collective runs as its representative's (decide)
            return
        if npu in self._symmetric_on:
            raise ConfigError(f"NPU {npu}: a collective issued while a symmetric collective runs there; set "
                              f"collective-simulation = \"per-message\" for runs that issue collectives that way")
        self._in_flight[npu] += 1
        if self.enabled and not network_running:
            self._issues[key][npu] = signature

    def finished(self, npu: int) -> None:
        if self.lockstep is None:
            self._in_flight[npu] -= 1
            self._symmetric_on.pop(npu, None)

    def decide(self, key: Hashable, comm: Communicator, system, plans: list) -> SymmetricInstance | None:
        """The collective's instance when it can run as one representative, else None (per message)."""
        if self.lockstep is not None:
            return self.lockstep.instance(comm, system, plans)
        decided = self._decided.get(key)
        if decided is None:
            instance = None
            issues = self._issues.pop(key, {})
            if (len(issues) == len(comm.members) > 1 and len(set(issues.values())) == 1
                    and all(self._in_flight[npu] == 1 for npu in comm.members)):
                instance = _plan_instance(comm, system, plans)
            if instance is not None:
                for npu in comm.members:
                    self._symmetric_on[npu] = instance
            decided = self._decided[key] = [instance, len(comm.members)]
        decided[1] -= 1  # members still to ask
        if not decided[1]:
            del self._decided[key]
        return decided[0]


def _plan_instance(comm: Communicator, system, plans: list) -> SymmetricInstance | None:
    """Check every condition of the module docstring that the issue itself does not show; build the instance."""
    network = getattr(system.endpoint, "network", None)
    if network is None or system.functional is not None:
        return None
    if getattr(network, "mirrors", None) not in ("members", "everyone", "copies"):
        return None
    if network.mirrors == "everyone" and len(comm.members) != network.topology.npus:
        return None  # messages meet on links: other NPUs' traffic would meet these
    planned = symmetric_orbits(comm, network, plans)
    if planned is None or not network.mirror(list(planned[1].values())):
        return None
    representative = comm.members[0]
    return SymmetricInstance(representative, planned[0], planned[1], SoloScheduler(system.scheduler, representative),
                             system.env.event())


def symmetric_orbits(comm: Communicator, network, plans: list, images: list[tuple] | None = None
                     ) -> tuple[Relabelling, dict] | None:
    """(the relabelling of the communicator's ranks, destination -> orbit) for a collective of `plans` run by
    its rank 0, when every phase treats the ranks alike and every orbit costs alike on `network`; else None.

    `images` (system.lockstep): member tuples of further communicators, aligned rank by rank with
    `comm.members`, whose NPUs run in step with it; each orbit then spans their copies too.
    """
    phases = [step for plan in plans for step in plan]
    if not phases or any(phase.op not in SYMMETRIC_OPS for phase, _name, _variant in phases):
        return None
    flat = any(phase.dim is None for phase, _name, _variant in phases)
    axes = (None,) if flat else comm.dims
    names: dict = defaultdict(set)  # axis index -> algorithm names run along it
    for phase, name, _variant in phases:
        names[0 if flat else comm.dims.index(phase.dim)].add(name)
    actions = []
    for axis in range(len(axes)):
        size = len(comm.members) if flat else comm.sizes[axis]
        kinds = {resolve(name)[0].symmetry for name in names.get(axis, ())} or {"cyclic"}  # no phase: any
        if len(kinds) > 1 or None in kinds or (kinds == {"xor"} and size & (size - 1)):
            return None
        actions.append(kinds.pop())
    relabelling = Relabelling(comm, tuple(actions), flat)
    representative = comm.members[0]
    maps = [dict(zip(comm.members, image)) for image in images or ()]
    orbits = {}
    for axis, axis_names in names.items():
        for name in axis_names:
            for coords in relabelling.partners(name, axis):
                dst = comm.members[npu_of(coords, relabelling.sizes)]
                if dst in orbits or dst == representative:
                    continue
                pairs = relabelling.orbit(dst)
                if maps:
                    pairs = [(image[src], image[to]) for image in maps for src, to in pairs]
                orbit = network.uniform_orbit(pairs, relabelling)
                if orbit is None:
                    return None
                orbits[dst] = orbit
    return (relabelling, orbits) if orbits else None
