"""Ring: every step sends to the next rank and receives from the previous one.

Reduce-scatter: p-1 steps of one part (D/p), each reduced; rank r ends with part r.
All-gather: p-1 steps of one shard. All-reduce: reduce-scatter then all-gather, 2(p-1) steps.
All-to-all (ASTRA-sim's ring all-to-all): every block travels hop by hop around the ring, one
block (D/p) per step, so a phase is p(p-1)/2 neighbour steps; a rank first sends its own blocks,
then forwards, in order of hops already travelled, the blocks that pass through it.
"""

from __future__ import annotations

from typing import Generator

from system.algorithms.context import PhaseContext, unit_bytes


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


def ring_all_to_all(ctx: PhaseContext) -> Generator:
    """Step (k, d) moves the block that has travelled k hops towards a rank d hops from its origin.

    Rank r sends, at (0, d), its own block for rank r+d, and at (k, d) with k > 0 forwards the
    block it received at (k-1, d); it receives at (k, d) the block rank r-1 sent then, which has
    arrived when k+1 == d (it came from rank r-1-k) and is forwarded later otherwise.
    """
    p, r = ctx.size, ctx.rank
    nxt, prev = (r + 1) % p, (r - 1) % p
    for hops in range(p - 1):
        for distance in range(hops + 1, p):
            if hops == 0:
                block = (r + distance) % p
                ctx.send(nxt, (block, block + 1), (0, distance))
            else:
                ctx.forward(prev, (hops - 1, distance), nxt, (hops, distance), ctx.unit)
            yield ctx.recv(prev, None, (hops, distance), ctx.unit)
            if hops + 1 == distance:
                origin = (prev - hops) % p
                ctx.land(prev, (origin, origin + 1), (hops, distance), reduce=False)
            yield ctx.handled()


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
        yield from ring_all_to_all(ctx)


def ring_bytes(op: str, nbytes: int, p: int) -> int:
    """Wire bytes the whole group sends in one ring phase: every rank sends one part per step
    (all-to-all: p(p-1)/2 steps, every block travelling hop by hop)."""
    if op == "all-to-all":
        steps = p * (p - 1) // 2
    else:
        steps = 2 * (p - 1) if op == "all-reduce" else p - 1
    return p * steps * unit_bytes(op, nbytes, p)
