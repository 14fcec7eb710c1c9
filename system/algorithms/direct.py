"""Direct: every rank talks to every other rank at once (at most `window` messages in flight).

A round sends to the next `window` distances (r+s) and waits for the matching receives (from
r-s); with no window all p-1 messages form one round, so a direct all-to-all costs
2E + net(D/p). Reduce-scatter sends part j to rank j and reduces what arrives; all-gather sends
the own shard to everyone; all-reduce is the two in turn. Gather and scatter are one round to or
from rank 0 (the root).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Generator

from system.algorithms.context import PhaseContext, unit_bytes


def direct_rounds(ctx: PhaseContext, window: int, reduce: bool, first_key: int) -> Generator:
    """Exchange with every other rank in rounds of `window` distances.

    Rank r sends part (r+s) -- its own part r when gathering -- to rank r+s and receives from
    r-s into part r (reducing) or part r-s (gathering, all-to-all).
    """
    p, r = ctx.size, ctx.rank
    gathering = ctx.op == "all-gather"
    window = window or p - 1
    for start in range(1, p, window):
        distances = range(start, min(start + window, p))
        arrivals = []
        for s in distances:
            to, frm = (r + s) % p, (r - s) % p
            out = r if gathering else to
            into = r if reduce else frm
            ctx.send(to, (out, out + 1), first_key + s)
            arrivals.append((frm, (into, into + 1), first_key + s))
        yield ctx.env.all_of([ctx.recv(frm, parts, key) for frm, parts, key in arrivals])
        cost = sum(ctx.land(frm, parts, key, reduce) for frm, parts, key in arrivals)
        yield ctx.env.timeout(ctx.endpoint_delay + cost)


def rooted_round(ctx: PhaseContext, to_root: bool) -> Generator:
    """Gather (to_root) or scatter: the root exchanges part j with every rank j, `window` at a time."""
    p, r = ctx.size, ctx.rank
    if r != 0:
        if to_root:
            ctx.send(0, (r, r + 1), r)
        else:
            yield ctx.recv(0, (r, r + 1), r)
            ctx.land(0, (r, r + 1), r, reduce=False)
        yield ctx.env.timeout(ctx.endpoint_delay)
        return
    window = ctx.window or p - 1
    for start in range(1, p, window):
        ranks = range(start, min(start + window, p))
        if to_root:
            yield ctx.env.all_of([ctx.recv(j, (j, j + 1), j) for j in ranks])
            for j in ranks:
                ctx.land(j, (j, j + 1), j, reduce=False)
        else:
            for j in ranks:
                ctx.send(j, (j, j + 1), j)
        yield ctx.env.timeout(ctx.endpoint_delay)


def direct(ctx: PhaseContext) -> Generator:
    yield ctx.env.timeout(ctx.endpoint_delay)
    if ctx.op == "reduce-scatter":
        yield from direct_rounds(ctx, ctx.window, reduce=True, first_key=0)
    elif ctx.op in ("all-gather", "all-to-all"):
        yield from direct_rounds(ctx, ctx.window, reduce=False, first_key=0)
    elif ctx.op == "all-reduce":
        yield from direct_rounds(ctx, ctx.window, reduce=True, first_key=0)
        gather = replace(ctx, op="all-gather", nbytes=ctx.unit)  # the second half moves reduced parts
        yield from direct_rounds(gather, ctx.window, reduce=False, first_key=ctx.size)
    else:  # gather | scatter
        yield from rooted_round(ctx, to_root=ctx.op == "gather")


def direct_bytes(op: str, nbytes: int, p: int) -> int:
    """Wire bytes the whole group sends in one direct phase: one part to every other rank (twice
    for all-reduce; gather and scatter: one part between the root and every other rank)."""
    unit = unit_bytes(op, nbytes, p)
    if op in ("gather", "scatter"):
        return (p - 1) * unit
    return (2 if op == "all-reduce" else 1) * p * (p - 1) * unit
