"""Router: input units, output units and a switch allocator, woken by the cycle clock.

Like Garnet's `Router::wakeup`, a router's step is an order of rooms, which sets the buffer
turnaround time:
1. input units: flits written by upstream output units are already in their VC buffers with the
   cycle each may leave (`InputUnit.receive`); nothing to do;
2. output units: credits returned by downstream input units are counted when needed (`absorb`);
3. the switch allocator of the router's model (`allocators/`) routes new heads through the routing
   unit, allocates downstream VCs and the crossbar, and moves the winners' flits through the
   crossbar onto their output links (`crossbar.traverse`);
4. the router asks to be woken at the first cycle anything it waits for can change.

A router is stepped only at cycles where it has something to do; it never polls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from netsim.garnet.clock import NEVER, Component, relative

if TYPE_CHECKING:  # (types only: the units are built by the network)
    from netsim.garnet.clock import CycleClock
    from netsim.garnet.input_unit import InputUnit, VirtualChannel
    from netsim.garnet.output_unit import OutputUnit


class Router(Component):
    """An NPU's own router, or a switch."""

    __slots__ = ("clock", "node", "pipeline", "inputs", "outputs", "occupied", "allocator",
                 "last_move")

    def __init__(self, clock: CycleClock, node: int, pipeline: int):
        super().__init__()
        self.clock = clock
        self.node = node
        self.pipeline = pipeline  # router_latency (+ a switch's own latency), cycles
        self.inputs: list[InputUnit] = []
        self.outputs: list[OutputUnit] = []
        self.occupied: list[VirtualChannel] = []  # VCs holding a packet, in the order they became occupied
        self.allocator: Any = None  # the switch allocator of the router model (set by the network)
        self.last_move = 0  # last cycle a flit left this router (deadlock detection)

    def add_input(self, port: InputUnit) -> None:
        port.index = len(self.inputs)
        base = sum(len(other.vcs) for other in self.inputs)  # ports may have different VC counts
        for vc in port.vcs:
            vc.rank = base + vc.index
        self.inputs.append(port)

    def add_output(self, out: OutputUnit) -> None:
        out.index = len(self.outputs)
        self.outputs.append(out)

    def occupy(self, vc: VirtualChannel) -> None:
        """`vc` has received a packet's head while empty (called by its input unit)."""
        self.occupied.append(vc)

    def vacate(self, vc: VirtualChannel) -> None:
        """`vc` has sent its last packet's tail (called by its input unit)."""
        occupied = self.occupied
        for i in range(len(occupied)):  # (list.remove, but a C loop compiled: remove is looked up by name)
            if occupied[i] is vc:
                del occupied[i]
                return
        raise ValueError(f"router {self.node}: vacating a VC that holds no packet")

    def moved(self, cycle: int) -> None:
        """A flit leaves this router at `cycle` (called by the crossbar)."""
        self.last_move = cycle

    def step(self, cycle: int) -> None:
        wake_at = self.allocator.allocate(cycle)
        if wake_at != NEVER:
            self.clock.wake(self, wake_at)

    def signature(self, c: int) -> tuple:
        """The router's own state relative to cycle `c` (its units and allocator have their own)."""
        return (relative(self.next_wake, c), tuple(map(id, self.occupied)),
                self.last_move - c if self.occupied else None, self.allocator.signature())

    def shift(self, span: int, moved: bool) -> None:
        """Move stored cycles `span` later; `last_move` only if the router `moved` in the period
        being repeated (then it moves in every period; else it stays idle throughout)."""
        if self.next_wake != NEVER:
            self.next_wake += span
        if moved:
            self.last_move += span
