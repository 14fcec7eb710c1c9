"""Binary trees: reduce up to the root, broadcast down from it, all-reduce as both.

Every message carries the whole buffer. A node waits for all its children, reduces what they
send (each arrival handled by an endpoint delay and its reduction) and passes the sum up; on the
way down it forwards what it received. A node with nothing to wait for (a leaf going up, the root
going down) starts with one endpoint delay.

`binary-tree` is the heap over positions (parent (i-1)//2, children 2i+1, 2i+2), rooted at rank 0.
`double-binary-tree` is ASTRA-sim's (NCCL's idea): two trees whose roots have one child each,
that child heading a balanced binary tree numbered in order over the other ranks -- the first
tree rooted at rank p-1 over ranks 0..p-2, the second rooted at rank 0 over ranks 1..p-1, so the
leaves of one are inner nodes of the other -- and an NPU's consecutive tree phases alternate
between them. Under ASTRA-sim's accounting an inner node also pays a reduction for what it
receives on the way down (ASTRA-sim 2.x's DoubleBinaryTreeAllReduce); under "physical" it only forwards.
"""

from __future__ import annotations

from typing import Generator

from system.algorithms.context import PhaseContext


def heap_tree(p: int) -> dict:
    """rank -> (parent or None, children) of the heap rooted at rank 0."""
    return {i: ((i - 1) // 2 if i else None, [c for c in (2 * i + 1, 2 * i + 2) if c < p]) for i in range(p)}


def _in_order(lo: int, hi: int, parent, tree: dict):
    """Add the balanced binary tree numbered in order over ranks lo..hi-1 under `parent`; returns its root."""
    if lo >= hi:
        return None
    mid = (lo + hi) // 2
    children = [c for c in (_in_order(lo, mid, mid, tree), _in_order(mid + 1, hi, mid, tree)) if c is not None]
    tree[mid] = (parent, children)
    return mid


def astra_tree(p: int, second: bool) -> dict:
    """rank -> (parent or None, children) of ASTRA-sim's first (root p-1) or second (root 0) tree."""
    tree: dict = {}
    root, lo, hi = (0, 1, p) if second else (p - 1, 0, p - 1)
    child = _in_order(lo, hi, root, tree)
    tree[root] = (None, [child] if child is not None else [])
    return tree


def _tree_walk(ctx: PhaseContext, tree: dict, up: bool, down: bool) -> Generator:
    parent, children = tree[ctx.rank]
    everything, full = (0, ctx.size), ctx.nbytes
    waits_first = (up and children) or (down and not up and parent is not None)
    if not waits_first:
        yield ctx.env.timeout(ctx.endpoint_delay)
    if up:
        if children:
            handled = []  # when each child's message is handled, timed from its own arrival

            def arrived(child):
                ctx.land(child, everything, "up", True)
                handled.append(ctx.handled_at(full))

            arrivals = [ctx.recv(c, everything, "up", full) for c in children]
            for child, arrival in zip(children, arrivals):
                arrival.callbacks.append(lambda _event, child=child: arrived(child))
            yield ctx.env.all_of(arrivals)
            yield ctx.env.timeout(max(handled) - ctx.env.now)
        if parent is not None:
            ctx.send(parent, everything, "up", full)
    if down:
        if parent is not None:
            yield ctx.recv(parent, everything, "down", full)
            ctx.land(parent, everything, "down", False)
            yield ctx.handled(full if up and children and ctx.astra_accounting else 0)
        for c in children:
            ctx.send(c, everything, "down", full)


def binary_tree(ctx: PhaseContext) -> Generator:
    yield from _tree_walk(ctx, heap_tree(ctx.size), up=ctx.op in ("reduce", "all-reduce"),
                          down=ctx.op in ("broadcast", "all-reduce"))


def double_binary_tree(ctx: PhaseContext) -> Generator:
    yield from _tree_walk(ctx, astra_tree(ctx.size, second=ctx.variant % 2 == 1), up=True, down=True)


def tree_bytes(op: str, nbytes: int, p: int) -> int:
    """Wire bytes the whole group sends in one tree phase: the whole buffer over each of the p-1
    tree edges, up (reduce), down (broadcast) or both (all-reduce)."""
    return (2 if op == "all-reduce" else 1) * (p - 1) * nbytes
