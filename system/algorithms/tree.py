"""Binary trees: reduce up to the root, broadcast down from it, all-reduce as both.

The tree is the heap over positions (parent (i-1)//2, children 2i+1, 2i+2), rooted at rank 0.
Every message carries the whole buffer. A node waits for all its children, reduces, and passes
the sum up; on the way down it forwards what it received. `double-binary-tree` (NCCL's idea)
uses two complementary trees -- the second is the first mirrored (rank p-1-i at position i), so
the first tree's leaves are the second tree's inner nodes -- and consecutive chunks alternate
between them.
"""

from __future__ import annotations

from typing import Generator

from system.algorithms.context import PhaseContext


def _tree_walk(ctx: PhaseContext, mirrored: bool, up: bool, down: bool) -> Generator:
    p = ctx.size
    rank_at = (lambda i: p - 1 - i) if mirrored else (lambda i: i)
    position = rank_at(ctx.rank)  # the mapping is its own inverse
    parent = rank_at((position - 1) // 2) if position else None
    children = [rank_at(c) for c in (2 * position + 1, 2 * position + 2) if c < p]
    everything, full = (0, p), ctx.nbytes
    if up:
        if children:
            yield ctx.env.all_of([ctx.recv(c, everything, "up", full) for c in children])
            cost = sum(ctx.land(c, everything, "up", True, full) for c in children)
            yield ctx.env.timeout(ctx.endpoint_delay + cost)
        if parent is not None:
            ctx.send(parent, everything, "up", full)
    if down:
        if parent is not None:
            yield ctx.recv(parent, everything, "down", full)
            ctx.land(parent, everything, "down", False, full)
            yield ctx.env.timeout(ctx.endpoint_delay)
        for c in children:
            ctx.send(c, everything, "down", full)


def binary_tree(ctx: PhaseContext) -> Generator:
    yield ctx.env.timeout(ctx.endpoint_delay)
    yield from _tree_walk(ctx, False, up=ctx.op in ("reduce", "all-reduce"), down=ctx.op in ("broadcast", "all-reduce"))


def double_binary_tree(ctx: PhaseContext) -> Generator:
    yield ctx.env.timeout(ctx.endpoint_delay)
    yield from _tree_walk(ctx, mirrored=ctx.variant % 2 == 1, up=True, down=True)


def tree_bytes(op: str, nbytes: int, p: int) -> int:
    """Wire bytes the whole group sends in one tree phase: the whole buffer over each of the p-1
    tree edges, up (reduce), down (broadcast) or both (all-reduce)."""
    return (2 if op == "all-reduce" else 1) * (p - 1) * nbytes
