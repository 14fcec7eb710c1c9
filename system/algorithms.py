"""Per-dimension collective algorithms, looked up by name (a new one is a registration).

An algorithm runs one phase of one chunk on one NPU: a simpy generator that exchanges messages
with the other members of `group` through the NPU's NetworkAPI endpoint. Each step starts when
the previous step's receive has completed and costs `endpoint_delay` after it (ASTRA-sim's
per-step behaviour); the phase starts with one endpoint delay too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Generator, Hashable

from netsim.api import NetworkAPI


@dataclass(frozen=True)
class PhaseContext:
    """Everything an algorithm needs for one phase on one NPU."""

    endpoint: NetworkAPI
    group: tuple  # NPU ids of this phase's group, in rank order
    rank: int  # this NPU's index in group
    op: str  # reduce-scatter | all-gather | all-reduce
    nbytes: int  # per-NPU data the phase starts with
    tag: Hashable  # unique per (collective, chunk, phase); steps extend it
    endpoint_delay: float
    reduce_ns_per_byte: float  # 3 / local-mem-bw, or 0 when local memory is free

    @property
    def size(self) -> int:
        return len(self.group)


def split_bytes(nbytes: int, parts: int) -> int:
    """Bytes in one of `parts` equal slices (rounded up so no byte is lost; at least 1)."""
    return max(1, math.ceil(nbytes / parts))


def ring(ctx: PhaseContext) -> Generator:
    """Ring: p-1 steps (reduce-scatter, all-gather) or 2(p-1) (all-reduce) to the next rank.

    Reduce-scatter and all-reduce send slices of nbytes/p; all-gather sends the whole per-NPU
    shard (nbytes) each step, so its output is p * nbytes.
    """
    env = ctx.endpoint.env
    p = ctx.size
    nxt = ctx.group[(ctx.rank + 1) % p]
    prev = ctx.group[(ctx.rank - 1) % p]
    if ctx.op == "all-gather":
        steps, message, reducing = p - 1, ctx.nbytes, 0
    elif ctx.op == "reduce-scatter":
        steps, message, reducing = p - 1, split_bytes(ctx.nbytes, p), p - 1
    elif ctx.op == "all-reduce":
        steps, message, reducing = 2 * (p - 1), split_bytes(ctx.nbytes, p), p - 1
    else:
        raise ValueError(f"ring does not implement {ctx.op}")
    yield env.timeout(ctx.endpoint_delay)
    for step in range(steps):
        ctx.endpoint.send(nxt, message, (ctx.tag, step))
        yield ctx.endpoint.recv(prev, message, (ctx.tag, step))
        delay = ctx.endpoint_delay
        if step < reducing:
            delay += ctx.reduce_ns_per_byte * message
        yield env.timeout(delay)


Algorithm = Callable[[PhaseContext], Generator]

ALGORITHMS: dict[str, Algorithm] = {
    "ring": ring,
}
