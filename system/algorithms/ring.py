"""Ring: every step sends to the next rank and receives from the previous one.

Reduce-scatter: p-1 steps of one part (D/p), each reduced; rank r ends with part r.
All-gather: p-1 steps of one shard. All-reduce: reduce-scatter then all-gather, 2(p-1) steps.
All-to-all: p-1 steps in ring order, step s sending rank r's block for rank r+s straight to it
(ASTRA-sim's ring all-to-all: one message in flight, the next distance each step).
"""

from __future__ import annotations

from typing import Generator

from system.algorithms.context import PhaseContext, unit_bytes
from system.algorithms.direct import direct_rounds


def ring_reduce_scatter(ctx: PhaseContext, first_key: int = 0) -> Generator:
    p, r = ctx.size, ctx.rank
    for step in range(p - 1):
        out, into = (r - step - 1) % p, (r - step - 2) % p
        yield from ctx.exchange((r + 1) % p, (r - 1) % p, (out, out + 1), (into, into + 1), first_key + step, True)


def ring_all_gather(ctx: PhaseContext, first_key: int = 0) -> Generator:
    p, r = ctx.size, ctx.rank
    for step in range(p - 1):
        out, into = (r - step) % p, (r - step - 1) % p
        yield from ctx.exchange((r + 1) % p, (r - 1) % p, (out, out + 1), (into, into + 1), first_key + step, False)


def ring(ctx: PhaseContext) -> Generator:
    yield ctx.env.timeout(ctx.endpoint_delay)
    if ctx.op == "reduce-scatter":
        yield from ring_reduce_scatter(ctx)
    elif ctx.op == "all-gather":
        yield from ring_all_gather(ctx)
    elif ctx.op == "all-reduce":
        yield from ring_reduce_scatter(ctx)
        yield from ring_all_gather(ctx, ctx.size - 1)
    else:  # all-to-all
        yield from direct_rounds(ctx, window=1, reduce=False, first_key=0)


def ring_bytes(op: str, nbytes: int, p: int) -> int:
    """Wire bytes the whole group sends in one ring phase: every rank sends one part per step."""
    steps = 2 * (p - 1) if op == "all-reduce" else p - 1
    return p * steps * unit_bytes(op, nbytes, p)
