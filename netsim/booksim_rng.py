"""BookSim's integer random numbers (Knuth's RANARRAY, `rng.c`, as `RandomSeed` and `RandomInt` use
it), so that a pattern BookSim draws from a seed (its `randperm`) is the same permutation here."""

from __future__ import annotations

KK, LL = 100, 37  # the long and the short lag
MM = 1 << 30  # the modulus
TT = 70  # guaranteed separation between streams
QUALITY = 1009  # numbers generated per refill, of which the first KK are used


def _mod_diff(x: int, y: int) -> int:
    return (x - y) & (MM - 1)


class KnuthRandom:
    """`ran_start(seed)` then `ran_arr_next()`; `randint(top)` is BookSim's RandomInt: 0..top."""

    def __init__(self, seed: int):
        self.state = self._start(seed)
        self.buffer: list[int] = []
        self.next_index = 0

    @staticmethod
    def _start(seed: int) -> list[int]:
        x = [0] * (KK + KK - 1)
        ss = (seed + 2) & (MM - 2)
        for j in range(KK):
            x[j] = ss  # bootstrap the buffer
            ss <<= 1
            if ss >= MM:
                ss -= MM - 2  # cyclic shift of 29 bits
        x[1] += 1  # make x[1] (and only x[1]) odd
        ss, t = seed & (MM - 1), TT - 1
        while t:
            for j in range(KK - 1, 0, -1):  # "square"
                x[j + j] = x[j]
                x[j + j - 1] = 0
            for j in range(KK + KK - 2, KK - 1, -1):
                x[j - (KK - LL)] = _mod_diff(x[j - (KK - LL)], x[j])
                x[j - KK] = _mod_diff(x[j - KK], x[j])
            if ss & 1:  # "multiply by z"
                for j in range(KK, 0, -1):
                    x[j] = x[j - 1]
                x[0] = x[KK]  # shift the buffer cyclically
                x[LL] = _mod_diff(x[LL], x[KK])
            if ss:
                ss >>= 1
            else:
                t -= 1
        state = [0] * KK
        for j in range(LL):
            state[j + KK - LL] = x[j]
        for j in range(LL, KK):
            state[j - LL] = x[j]
        for _ in range(10):  # warm things up
            KnuthRandom._array(state, KK + KK - 1)
        return state

    @staticmethod
    def _array(state: list[int], n: int) -> list[int]:
        """`ran_array`: n new numbers, advancing `state` in place."""
        aa = state[:] + [0] * (n - KK)
        for j in range(KK, n):
            aa[j] = _mod_diff(aa[j - KK], aa[j - LL])
        j = n
        for i in range(LL):
            state[i] = _mod_diff(aa[j - KK], aa[j - LL])
            j += 1
        for i in range(LL, KK):
            state[i] = _mod_diff(aa[j - KK], state[i - LL])
            j += 1
        return aa

    def next(self) -> int:
        """`ran_arr_next`: a number in [0, 2^30)."""
        if self.next_index == len(self.buffer):  # used up (or none yet): `ran_arr_cycle`
            self.buffer = self._array(self.state, QUALITY)[:KK]
            self.next_index = 0
        value = self.buffer[self.next_index]
        self.next_index += 1
        return value

    def randint(self, top: int) -> int:
        """BookSim's RandomInt(top): uniform-ish in 0..top."""
        return self.next() % (top + 1)


def random_permutation(nodes: int, seed: int) -> list[int]:
    """BookSim's `randperm` (RandomPermutationTrafficPattern::randomize): destination of each source."""
    rng = KnuthRandom(seed)
    dest = [-1] * nodes
    for i in range(nodes):
        index = rng.randint(nodes - 1 - i)
        free = [j for j, d in enumerate(dest) if d == -1]  # the index-th still unassigned source
        dest[free[index]] = i
    return dest
