"""Whole-run symmetry: NPUs whose training loops run in lockstep, simulated by one representative each.

A training loop declares each NPU's `Role`: a key (NPUs with equal keys run the same program: every
NPU of a data- or hybrid-parallel loop, each stage of a pipeline), the communicators it issues
collectives on (with the kinds it issues there) and its point-to-point peers, slot by slot. The
loop promises that an NPU's run depends on which NPU it is only through its role.

Within a class of equal keys, every NPU then follows the timeline of the class's lowest NPU (its
representative) when these hold, as `plan_lockstep` checks before the run: in each slot the
class's communicators have one shape and partition the class (so all members of a collective are
in the class and issue it together, at the same moments); every phase of every kind issued there
treats the ranks alike (system.symmetric) and every member's copy of each message of the
representative costs exactly the same, over all the class's communicators of the slot (rank i of
one standing for rank i of another); and each peer slot maps the class one-to-one onto another
class, every such message costing the same. All start at time 0 and compute alike, so by
induction on time they stay in step. Only the representatives' loops run: a collective as a
symmetric one (its orbits spread over the slot's communicators), a point-to-point message as one
message to the peer class's representative standing for every member's. Congestion-unaware
backends (`mirrors == "members"`: messages never meet) and the packet backend (`"copies"`: every
member's copy is sent, and their arrivals in one cycle are checked: netsim.garnet.shortcuts.mirrored; on a torus
the planned orbits may fold onto a quotient torus, netsim.garnet.shortcuts.quotient); the
congestion-aware backend runs per message.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Hashable

import simpy

from system.collectives import Communicator
from system.symmetric import RepresentativeEndpoint, SoloScheduler, SymmetricInstance, symmetric_orbits

PLANNED_BYTES = 1 << 20  # a collective's size when checking its phases (their algorithms do not depend on it)


@dataclass(frozen=True)
class Role:
    """What an NPU's training loop depends on (see the module docstring)."""

    key: Hashable  # NPUs with equal keys run the same program
    collectives: tuple  # per slot: (Communicator, the kinds of collective issued on it)
    peers: tuple = ()  # per slot: the NPU point-to-point messages go to and come from (None: none)


class Lockstep:
    """The representatives of a run in lockstep, and what their collectives and messages stand for."""

    def __init__(self, representative: list[int], network):
        self.representative = representative  # per NPU: the NPU whose timeline it follows
        self.network = network
        self._orbits: dict[tuple, tuple | None] = {}  # (communicator, phases' ops and algorithms) -> symmetric_orbits
        self._images: dict[Communicator, list[tuple]] = {}  # a representative's communicator -> its slot's members
        self._peer_orbits: dict[int, dict] = defaultdict(dict)  # sender -> {peer: orbit}
        self._schedulers: dict[int, SoloScheduler] = {}

    def representatives(self) -> list[int]:
        return sorted(set(self.representative))

    def instance(self, comm: Communicator, system, plans: list) -> SymmetricInstance:
        """The collective of representative `system` as one symmetric instance (plan_lockstep checked it can)."""
        planned = self._planned(comm, plans)
        if planned is None:  # plan_lockstep checked every kind of every slot: a loop issued an undeclared one
            raise RuntimeError(f"lockstep run: NPU {system.npu} issued a collective over {comm.members[:8]} that "
                               f"its loop's role did not declare (or of a kind it did not declare there)")
        scheduler = self._schedulers.get(system.npu)
        if scheduler is None:
            scheduler = self._schedulers[system.npu] = SoloScheduler(system.scheduler, system.npu)
        return SymmetricInstance(system.npu, planned[0], planned[1], scheduler, system.env.event())

    def _planned(self, comm: Communicator, plans: list) -> tuple | None:
        images = self._images.get(comm)
        if images is None:
            return None
        key = (comm, frozenset((phase.dim, phase.op, name) for plan in plans for phase, name, _variant in plan))
        if key not in self._orbits:
            self._orbits[key] = symmetric_orbits(comm, self.network, plans, images)
        return self._orbits[key]

    def planned_orbits(self) -> list:
        """Every orbit the plan found: of the collective slots' phases and of the peer slots."""
        orbits = [orbit for planned in self._orbits.values() if planned for orbit in planned[1].values()]
        return orbits + [orbit for peers in self._peer_orbits.values() for orbit in peers.values()]

    def endpoint(self, npu: int, endpoint):
        """The point-to-point NetworkAPI of representative `npu` (its messages stand for its class's)."""
        return LockstepEndpoint(endpoint, self._peer_orbits.get(npu, {}))

    def add_collectives(self, members: list[int], roles: list[Role], system) -> bool:
        """Plan the class's collective slots: whether each partitions the class alike and runs symmetric,
        costing alike (`system`: the representative's), and whether the member's slots share what the
        representative's share (a communicator, its member list, a phase's group queue) and nothing else."""
        first = roles[members[0]]
        sharing = _sharing(first, members[0], system.topology)
        if any(_sharing(roles[npu], npu, system.topology) != sharing for npu in members):
            return False
        for slot, (comm, kinds) in enumerate(first.collectives):
            shape = (comm.dims, comm.sizes, comm.algorithm_dims, comm.shaped, kinds)
            images: dict[tuple, None] = {}  # the slot's communicators, in order
            for npu in members:
                other, other_kinds = roles[npu].collectives[slot]
                if (other.dims, other.sizes, other.algorithm_dims, other.shaped, other_kinds) != shape:
                    return False
                images[other.members] = None
            if len(comm.members) < 2:
                continue  # the NPU alone: no collective is issued there (NpuRun.issue)
            covered = [npu for image in images for npu in image]
            if len(covered) != len(members) or set(covered) != set(members):
                return False  # the slot's communicators overlap, or reach out of the class
            self._images[comm] = list(images)
            for kind in kinds:
                plans = system.phase_plans(kind, PLANNED_BYTES, comm)
                if self._planned(comm, [[(phase, name, 0) for phase, name in plan] for plan in plans]) is None:
                    return False
        return True

    def add_peers(self, members: list[int], roles: list[Role], classes: dict) -> bool:
        """Plan the class's peer slots: whether each maps the class one-to-one onto the peer's class, every
        message costing alike."""
        first = roles[members[0]]
        orbits = self._peer_orbits[members[0]]
        for slot, peer in enumerate(first.peers):
            pairs = [(npu, roles[npu].peers[slot]) for npu in members]
            receivers = [dst for _src, dst in pairs]
            if peer is None:
                if any(dst is not None for dst in receivers):
                    return False
                continue
            if (None in receivers or self.representative[peer] != peer
                    or sorted(receivers) != classes[roles[peer].key]
                    or any(src not in roles[dst].peers for src, dst in pairs)):
                return False
            known = orbits.get(peer)
            if known is None:
                known = orbits[peer] = self.network.uniform_orbit(pairs)
            if known is None or known.pairs != pairs:
                return False
        return True


def _sharing(role: Role, npu: int, topology) -> tuple:
    """Which of the role's communicators, member lists and (per axis) phase groups of `npu` are equal: each
    one's index among the distinct ones (System keys its sequence numbers and queues by them)."""
    items: list = []
    for comm, _kinds in role.collectives:
        items += [comm, comm.members, *(comm.peers(topology, npu, dim) for dim in comm.dims)]
    index: dict = {}
    return tuple(index.setdefault((type(item), item), len(index)) for item in items)


class LockstepEndpoint(RepresentativeEndpoint):
    """A representative's NetworkAPI for point-to-point messages: each goes to the peer class's
    representative and is counted for every pair of the class (its orbit)."""

    def __init__(self, endpoint, orbits: dict):
        super().__init__(endpoint)
        self.orbits = orbits  # peer -> orbit

    def send(self, dst: int, nbytes: int, tag: Hashable) -> simpy.Event:
        orbit = self.orbits.get(dst)
        if orbit is None:  # plan_lockstep mapped every declared peer: the loop sent to an undeclared one
            raise RuntimeError(f"lockstep run: NPU {self.npu} sends to NPU {dst}, not a peer its loop's role declared")
        receiver, src = self.network.endpoint(dst), self.npu
        self.network.send_mirrored(src, dst, nbytes, orbit, lambda: receiver.deliver(src, tag, nbytes), dst)
        return self.network.handed_off


def plan_lockstep(systems: list, role_of) -> Lockstep | None:
    """The run's lockstep plan, installed in the systems' shared scheduler, when some class has more than one
    NPU and every condition of the module docstring holds; None: every NPU runs its own loop. `role_of(npu)`
    gives an NPU's Role; the caller runs only the representatives' loops."""
    first = systems[0]
    network = getattr(first.endpoint, "network", None)
    if (network is None or not first.scheduler.symmetric.enabled or first.functional is not None
            or getattr(network, "mirrors", None) not in ("members", "copies")):
        return None
    roles = [role_of(system.npu) for system in systems]
    classes: dict[Hashable, list[int]] = defaultdict(list)
    for npu, role in enumerate(roles):
        classes[role.key].append(npu)
    if all(len(members) == 1 for members in classes.values()):
        return None
    representative = [0] * len(roles)
    for members in classes.values():
        for npu in members:
            representative[npu] = members[0]
    lockstep = Lockstep(representative, network)
    for members in classes.values():
        shapes = {(len(roles[npu].collectives), len(roles[npu].peers)) for npu in members}
        if (len(shapes) > 1 or not lockstep.add_collectives(members, roles, systems[members[0]])
                or not lockstep.add_peers(members, roles, classes)):
            return None
    network.stands_for(max(len(members) for members in classes.values()))
    orbits = lockstep.planned_orbits()
    if orbits:
        network.mirror(orbits)  # (the packet backend may fold them onto a quotient torus)
    first.scheduler.symmetric.use_lockstep(lockstep)
    return lockstep
