"""Per-dimension collective algorithms, looked up by name (a new one is a registration).

An algorithm runs one phase of one chunk on one NPU: a simpy generator over a `PhaseContext`
that exchanges messages with the other members of the phase's group. Each step starts when the
previous step's receive has completed and costs `endpoint-delay` after it (plus 3*bytes/local-mem-bw
when it reduces); every phase starts with one endpoint delay. A registration also says which
collective ops the algorithm implements, which of them need a power-of-two group, and whether it
is a flat `one-*` variant (one phase over all NPUs of the communicator instead of one per dimension),
and, for system.symmetric, the relabellings of ranks it is unchanged by (`symmetry`: cyclic shifts,
XOR masks, or None) and the ranks rank 0 sends to (`partners`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generator

from netsim.errors import ConfigError
from system.algorithms.context import PhaseContext
from system.algorithms.direct import direct, direct_bytes
from system.algorithms.recursive import (dissemination, dissemination_bytes, halving_doubling, halving_doubling_bytes,
                                         recursive_doubling, recursive_doubling_bytes)
from system.algorithms.ring import ring, ring_bytes
from system.algorithms.tree import binary_tree, double_binary_tree, tree_bytes

REDUCTIONS = frozenset({"all-reduce", "reduce-scatter", "all-gather"})


def _powers_of_two(size: int) -> list[int]:
    """1, 2, 4, ... below `size`."""
    return [1 << k for k in range(max(size - 1, 0).bit_length())]


def _neighbour(size: int) -> list[int]:
    return [1]


def _everyone(size: int) -> list[int]:
    return list(range(1, size))


@dataclass(frozen=True)
class Algorithm:
    """A registered algorithm: its generator and what it can run."""

    run: Callable[[PhaseContext], Generator]
    wire_bytes: Callable[[str, int, int], int]  # (op, nbytes, group size) -> bytes the whole group sends
    ops: frozenset
    power_of_two: frozenset = frozenset()  # ops that need a power-of-two group
    flat: bool = False  # one phase over the whole communicator
    symmetry: str | None = None  # "cyclic" | "xor": rank relabellings that leave the algorithm unchanged
    partners: Callable[[int], list[int]] = _everyone  # group size -> the ranks rank 0 sends to

    def supports(self, op: str, size: int) -> bool:
        return op in self.ops and not (op in self.power_of_two and size & (size - 1))

    def check(self, name: str, op: str, size: int) -> None:
        """A one-line ConfigError when this algorithm cannot run `op` on `size` NPUs."""
        if op not in self.ops:
            raise ConfigError(f"algorithm '{name}' does not implement {op} (it implements {', '.join(sorted(self.ops))})")
        if op in self.power_of_two and size & (size - 1):
            raise ConfigError(f"algorithm '{name}' needs a power-of-two group for {op}, got {size} NPUs")


_RING = Algorithm(ring, ring_bytes, REDUCTIONS | {"all-to-all"}, symmetry="cyclic", partners=_neighbour)
# gather and scatter have a root: system.symmetric never mirrors them, whatever the algorithm
_DIRECT = Algorithm(direct, direct_bytes, REDUCTIONS | {"all-to-all", "gather", "scatter"}, symmetry="cyclic")
_HALVING_DOUBLING = Algorithm(halving_doubling, halving_doubling_bytes, REDUCTIONS,
                              frozenset({"reduce-scatter", "all-gather"}), symmetry="xor", partners=_powers_of_two)

ALGORITHMS: dict[str, Algorithm] = {
    "ring": _RING,
    "direct": _DIRECT,
    "halving-doubling": _HALVING_DOUBLING,
    "recursive-doubling": Algorithm(recursive_doubling, recursive_doubling_bytes,
                                    frozenset({"all-reduce", "all-gather"}), frozenset({"all-gather"}),
                                    symmetry="xor", partners=_powers_of_two),
    "double-binary-tree": Algorithm(double_binary_tree, tree_bytes, frozenset({"all-reduce"})),
    "binary-tree": Algorithm(binary_tree, tree_bytes, frozenset({"all-reduce", "broadcast", "reduce"})),
    "dissemination": Algorithm(dissemination, dissemination_bytes, frozenset({"barrier"}), symmetry="cyclic",
                               partners=lambda size: sorted({d % size for d in _powers_of_two(size)})),
    "one-ring": Algorithm(ring, ring_bytes, _RING.ops, flat=True, symmetry="cyclic", partners=_neighbour),
    "one-direct": Algorithm(direct, direct_bytes, _DIRECT.ops, flat=True, symmetry="cyclic"),
    "one-halving-doubling": Algorithm(halving_doubling, halving_doubling_bytes, _HALVING_DOUBLING.ops,
                                      _HALVING_DOUBLING.power_of_two, flat=True, symmetry="xor",
                                      partners=_powers_of_two),
}

# Collectives that no ASTRA-sim key configures run over the whole communicator with these.
ROOTED_ALGORITHM = {"broadcast": "binary-tree", "reduce": "binary-tree", "gather": "direct", "scatter": "direct",
                    "barrier": "dissemination"}


def resolve(name: str) -> tuple[Algorithm, int | None]:
    """The registration behind `name` and its window (`direct4` -> direct with window 4; None = config's)."""
    if name.startswith("direct") and name[6:].isdecimal():
        return ALGORITHMS["direct"], int(name[6:])
    return ALGORITHMS[name], None


def known(name: str) -> bool:
    return name in ALGORITHMS or (name.startswith("direct") and name[6:].isdecimal())


__all__ = ["ALGORITHMS", "Algorithm", "PhaseContext", "ROOTED_ALGORITHM", "known", "resolve"]
