"""One NPU standing for many on the packet backend: every member's copy sent, the copies' arrivals compared.

system.symmetric runs a collective as one representative NPU when every phase treats the ranks
alike, and system.lockstep a whole training run as one NPU per class of NPUs that run alike. Here
messages meet in routers, so every member's copy of each of the representative's messages is still
sent, a message of its own through the routers and links; what is saved is the members'
system-layer work (their algorithm or loop steps, simpy events and endpoint calls), which was most
of a large collective's cost once the core was compiled. That is exact while all copies of each
message arrive in one cycle: every member then receives what the representative receives when it
does, so it would have sent its own copies when the representative sent them (by induction over
time; routers and NICs do not depend on the order of sends within a cycle, which the tests check
against per-message runs). The first copy that arrives in another cycle raises `MirrorMismatch`:
the run is not symmetric on this network, and the runner simulates it again per message.
"""

from __future__ import annotations

from netsim.errors import MirrorMismatch


class MirroredOrbit:
    """The (sender, receiver) pairs one of the representative's messages stands for, with their routes
    (GarnetNetwork.route: each pair has one)."""

    __slots__ = ("pairs", "routes", "senders", "receivers")

    def __init__(self, pairs: list[tuple[int, int]], routes: list[tuple]):
        self.pairs = pairs
        self.routes = routes
        self.senders = tuple(src for src, _dst in pairs)
        self.receivers = tuple(dst for _src, dst in pairs)


class MirroredSend:
    """The copies of one representative message in flight: the cycle the first arrived in, and the call
    to make when the copy to `receiver` arrives. It is the copies' tag."""

    __slots__ = ("receiver", "orbit", "nbytes", "arrived", "cycle")

    def __init__(self, receiver: int, orbit: MirroredOrbit, nbytes: int, arrived):
        self.receiver = receiver  # the NPU whose receipt of its copy the system layer waits for
        self.orbit = orbit
        self.nbytes = nbytes
        self.arrived = arrived
        self.cycle = -1  # the cycle every copy must arrive in (-1: none has yet)

    def __repr__(self) -> str:
        return f"<a copy of a message to NPU {self.receiver} that stands for others>"

    def check(self, src: int, dst: int, cycle: int) -> bool:
        """The copy src -> dst arrives at `cycle`: True if it is the first copy to. Raises MirrorMismatch
        when another copy arrived in another cycle."""
        if self.cycle < 0:
            self.cycle = cycle
            return True
        if cycle != self.cycle:
            raise MirrorMismatch(f"symmetric run: NPU {src}'s message to NPU {dst} arrived in cycle {cycle}, the other "
                                 f"members' copies of it in cycle {self.cycle}")
        return False
