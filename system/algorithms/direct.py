"""Direct: every rank talks to every other rank at once (at most `window` messages awaited at a time).

Rank r sends to r+1, r+2, ..., r+p-1 and receives from r-1, r-2, ..., as ASTRA-sim's direct
algorithm does: the first `window` messages go at once, and each arrival, once handled (an
endpoint delay, then its reduction), frees a slot for the next one. With no window a direct
all-to-all costs 2E + net(D/p). Reduce-scatter sends part j to rank j and reduces what arrives;
all-gather sends the own shard to everyone; all-reduce is the two in turn, its all-gather
messages going out, one per handled arrival, once every reduce-scatter message has arrived.
Under ASTRA-sim's accounting a windowed phase charges reductions as ASTRA-sim does: the arrivals
come in alternating runs of `window`, only the first run of each pair reduced (all-reduce: one
pair in two). Gather and scatter are one round to or from rank 0 (the root).
"""

from __future__ import annotations

from typing import Generator

import simpy

from system.algorithms.context import PhaseContext, unit_bytes


class _Direct:
    """One NPU's direct phase: its messages in turn, `window` slots; `done` fires when all are handled."""

    def __init__(self, ctx: PhaseContext, ops: tuple):
        p, r = ctx.size, ctx.rank
        self.ctx = ctx
        self.messages = []  # (to, part sent, from, part received into, reduce)
        for op in ops:
            for s in range(1, p):
                to, frm = (r + s) % p, (r - s) % p
                if op == "reduce-scatter":
                    self.messages.append((to, to, frm, r, True))
                elif op == "all-gather":
                    self.messages.append((to, r, frm, frm, False))
                else:  # all-to-all
                    self.messages.append((to, to, frm, frm, False))
        self.window = min(ctx.window or p - 1, p - 1)
        self.gate = p - 1 if len(ops) == 2 else len(self.messages)  # all-gather sends wait for every arrival before
        self.free, self.sent, self.arrived, self.handled = self.window, 0, 0, 0
        self.done = ctx.env.event()
        self._send_ready()

    def _send_ready(self) -> None:
        ctx = self.ctx
        while self.free and self.sent < len(self.messages) and (self.sent < self.gate or self.arrived >= self.gate):
            to, out, frm, into, reduce = self.messages[self.sent]
            self.sent += 1
            self.free -= 1
            key = self.sent
            ctx.send(to, (out, out + 1), key)
            ctx.recv(frm, (into, into + 1), key).callbacks.append(
                lambda _event, frm=frm, into=into, key=key, reduce=reduce: self._arrived(frm, into, key, reduce))

    def _charged(self, reduce: bool) -> bool:
        """Whether this arrival pays a reduction: ASTRA-sim's counting of its windowed packets, or simply
        whether it reduces."""
        if not self.ctx.astra_accounting or self.window == self.ctx.size - 1:
            return reduce
        w, k, op = self.window, self.arrived, self.ctx.op
        first_run = (k - 1) % (2 * w) < w
        return first_run and (op == "reduce-scatter" or op == "all-reduce" and (w + k - 1) // (2 * w) % 2 == 0)

    def _arrived(self, frm: int, into: int, key: int, reduce: bool) -> None:
        ctx = self.ctx
        self.arrived += 1
        ctx.land(frm, (into, into + 1), key, reduce)
        ready = ctx.handled_at(ctx.unit if self._charged(reduce) else 0)
        ctx.env.timeout(ready - ctx.env.now).callbacks.append(self._handled)

    def _handled(self, _event) -> None:
        self.handled += 1
        self.free += 1
        self._send_ready()
        if self.handled == len(self.messages):
            self.done.succeed()


def direct_phase(ctx: PhaseContext, *ops: str) -> simpy.Event:
    """Run `ops` (one, or reduce-scatter then all-gather) as one direct phase; fires when all is handled."""
    return _Direct(ctx, ops).done


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
    if ctx.op == "all-reduce":
        yield direct_phase(ctx, "reduce-scatter", "all-gather")
    elif ctx.op in ("reduce-scatter", "all-gather", "all-to-all"):
        yield direct_phase(ctx, ctx.op)
    else:  # gather | scatter
        yield from rooted_round(ctx, to_root=ctx.op == "gather")


def direct_bytes(op: str, nbytes: int, p: int) -> int:
    """Wire bytes the whole group sends in one direct phase: one part to every other rank (twice
    for all-reduce; gather and scatter: one part between the root and every other rank)."""
    unit = unit_bytes(op, nbytes, p)
    if op in ("gather", "scatter"):
        return (p - 1) * unit
    return (2 if op == "all-reduce" else 1) * p * (p - 1) * unit
