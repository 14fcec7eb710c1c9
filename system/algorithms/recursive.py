"""Logarithmic algorithms: halving-doubling, recursive doubling and the dissemination barrier.

Halving-doubling (Rabenseifner): reduce-scatter by recursive halving -- at distance p/2, p/4,
..., 1 a rank swaps half of its current range with `rank ^ distance` and reduces the half it
keeps (messages D/2, D/4, ..., D/p) -- and all-gather by recursive doubling, the same steps in
reverse. Under ASTRA-sim's accounting (`collective-accounting = "astra-sim"`) a halving step is
charged the reduction of the message it sends next, half the one it received, and the last step
none (ASTRA-sim 2.x's HalvingDoubling); under "physical" each step reduces what it received.
Recursive doubling (butterfly) all-reduce swaps and reduces the whole buffer at every
step. Both all-reduces handle any group size: with p = 2^k + e, ranks 0..2e-1 first fold pairwise
(each odd rank hands its data to the even rank below), the 2^k remaining ranks run the algorithm,
and the even ranks hand the result back. Reduce-scatter and all-gather need a power of two.
"""

from __future__ import annotations

from typing import Generator

from system.algorithms.context import PhaseContext, unit_bytes


def _fold(p: int, rank: int) -> tuple[int, int, int]:
    """(largest power of two <= p, extra ranks e, this rank's virtual rank or -1 if it folds away)."""
    power = 1 << (p.bit_length() - 1)
    extra = p - power
    if rank < 2 * extra:
        return power, extra, rank // 2 if rank % 2 == 0 else -1
    return power, extra, rank - extra


def _real(virtual: int, extra: int) -> int:
    return 2 * virtual if virtual < extra else virtual + extra


def _halving(ctx: PhaseContext, virtual: int, power: int, extra: int, key: int) -> Generator:
    """Recursive halving over the virtual group; returns the part range this rank ends with."""
    lo, hi = 0, ctx.size
    distance = power // 2
    while distance:
        partner = _real(virtual ^ distance, extra)
        mid = (lo + hi) // 2
        keep, give = ((mid, hi), (lo, mid)) if virtual & distance else ((lo, mid), (mid, hi))
        charged = None  # the received message's reduction
        if ctx.astra_accounting:
            charged = (keep[1] - keep[0]) // 2 * ctx.unit if distance > 1 else 0
        yield from ctx.exchange(partner, partner, give, keep, key, True, charged=charged)
        lo, hi = keep
        distance //= 2
        key += 1
    return lo, hi


def _doubling(ctx: PhaseContext, virtual: int, power: int, extra: int, key: int, ranges: list) -> Generator:
    """Recursive doubling over the virtual group, growing back through `ranges` (innermost last)."""
    distance = 1
    own = ranges.pop()
    while distance < power:
        partner = _real(virtual ^ distance, extra)
        outer = ranges.pop()
        other = (outer[0], own[0]) if own[0] > outer[0] else (own[1], outer[1])
        yield from ctx.exchange(partner, partner, own, other, key, False)
        own = outer
        distance *= 2
        key += 1


def _nested_ranges(p: int, virtual: int, power: int) -> list:
    """The part ranges recursive halving visits for `virtual`, outermost first."""
    ranges = [(0, p)]
    lo, hi = 0, p
    distance = power // 2
    while distance:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if virtual & distance else (lo, mid)
        ranges.append((lo, hi))
        distance //= 2
    return ranges


def _all_reduce(ctx: PhaseContext, butterfly: bool) -> Generator:
    p, r = ctx.size, ctx.rank
    power, extra, virtual = _fold(p, r)
    everything, full = (0, p), ctx.nbytes
    if r < 2 * extra:  # fold the extra ranks into their even neighbours
        if virtual < 0:
            ctx.send(r - 1, everything, "fold", full)
            yield ctx.recv(r - 1, everything, "unfold", full)
            ctx.land(r - 1, everything, "unfold", False)
            yield ctx.handled()
            return
        yield ctx.recv(r + 1, everything, "fold", full)
        ctx.land(r + 1, everything, "fold", True)
        yield ctx.handled(full)
    if butterfly:
        distance, key = 1, 0
        while distance < power:
            partner = _real(virtual ^ distance, extra)
            yield from ctx.exchange(partner, partner, everything, everything, key, True, full)
            distance, key = distance * 2, key + 1
    else:
        yield from _halving(ctx, virtual, power, extra, 0)
        yield from _doubling(ctx, virtual, power, extra, power, _nested_ranges(p, virtual, power))
    if r < 2 * extra:
        ctx.send(r + 1, everything, "unfold", full)


def halving_doubling(ctx: PhaseContext) -> Generator:
    yield ctx.env.timeout(ctx.endpoint_delay)
    p = ctx.size
    if ctx.op == "reduce-scatter":
        yield from _halving(ctx, ctx.rank, p, 0, 0)
    elif ctx.op == "all-gather":
        yield from _doubling(ctx, ctx.rank, p, 0, 0, _nested_ranges(p, ctx.rank, p))
    else:
        yield from _all_reduce(ctx, butterfly=False)


def recursive_doubling(ctx: PhaseContext) -> Generator:
    yield ctx.env.timeout(ctx.endpoint_delay)
    if ctx.op == "all-gather":
        yield from _doubling(ctx, ctx.rank, ctx.size, 0, 0, _nested_ranges(ctx.size, ctx.rank, ctx.size))
    else:
        yield from _all_reduce(ctx, butterfly=True)


def dissemination(ctx: PhaseContext) -> Generator:
    """Barrier: in round k every rank signals rank+2^k and waits for rank-2^k (ceil(log2 p) rounds)."""
    yield ctx.env.timeout(ctx.endpoint_delay)
    p, r = ctx.size, ctx.rank
    distance, key = 1, 0
    while distance < p:
        yield from ctx.exchange((r + distance) % p, (r - distance) % p, None, None, key, False)
        distance, key = distance * 2, key + 1


def halving_doubling_bytes(op: str, nbytes: int, p: int) -> int:
    """Wire bytes the whole group sends in one halving-doubling phase. Each level of recursive
    halving moves p parts in all (every pair swaps complementary halves of a range, and the ranges
    of a level cover all p parts once per pair), so log2(power) levels move p(power-1) parts
    between them; doubling mirrors it; all-reduce adds the fold and unfold of the extra ranks."""
    power, extra, _ = _fold(p, 0)
    if op in ("reduce-scatter", "all-gather"):
        return p * (power - 1) * unit_bytes(op, nbytes, p)
    return 2 * p * (power - 1) * unit_bytes(op, nbytes, p) + 2 * extra * nbytes


def recursive_doubling_bytes(op: str, nbytes: int, p: int) -> int:
    """Wire bytes the whole group sends in one recursive-doubling phase: all-gather as
    halving-doubling's; all-reduce swaps the whole buffer at each of log2(power) steps."""
    if op == "all-gather":
        return halving_doubling_bytes(op, nbytes, p)
    power, extra, _ = _fold(p, 0)
    return power * (power.bit_length() - 1) * nbytes + 2 * extra * nbytes


def dissemination_bytes(op: str, nbytes: int, p: int) -> int:
    """Wire bytes of a dissemination barrier: one 1-byte signal per rank per round, ceil(log2 p) rounds."""
    return p * (p - 1).bit_length()
