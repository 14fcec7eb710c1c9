"""Functional mode: collectives carry real numpy payloads, and the results are checked.

`Functional(systems)` attaches to every System of a run. Each collective then gets a random
integer input per NPU (one int32 element per byte; integers so sums are exact), every algorithm step
moves or reduces the actual slices it names (`PhaseContext.send/land` post them in a mailbox
keyed like the network's messages), and `verify()` compares what each NPU ends with against the
collective's definition: all-reduce the element-wise sum everywhere; reduce-scatter the sum on
each NPU's share, the shares tiling the data; all-gather and gather the concatenation in rank
order; all-to-all the transpose of blocks; broadcast, scatter and reduce from/to rank 0; barrier:
no NPU leaves before the last one entered. In timing mode none of this exists (`System.functional`
is None), so it costs the timing path nothing.

Two payload layouts: reductions and broadcast keep a 1-D buffer whose phases narrow and widen a
range (part i of a range of p parts is [lo + (hi-lo)i/p, lo + (hi-lo)(i+1)/p)); gathers, scatter
and all-to-all keep one slot per rank of the communicator (an object array shaped like the
communicator's dimensions), and a phase on dimension d moves slots along d's axis.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from netsim.errors import NetsimError

SLOTTED = ("all-gather", "gather", "all-to-all", "scatter")


class VerificationError(NetsimError):
    """A collective computed the wrong result (a bug in an algorithm, not in the user's input)."""

    exit_code = 1


class _PhaseData:
    """One phase's view of an NPU's payload; subclasses say what a part range is."""

    def __init__(self, functional: "Functional", npu: int):
        self.functional = functional
        self.npu = npu
        self.finish = lambda: None  # replaced by the chunk to advance its state after the phase

    def post(self, dst: int, tag, parts: tuple) -> None:
        self.functional.mailbox[(self.npu, dst, tag)] = self.take(*parts)

    def land(self, src: int, tag, parts: tuple, reduce: bool) -> None:
        self.put(*parts, self.functional.mailbox.pop((src, self.npu, tag)), reduce)

    def relay(self, src: int, tag, dst: int, out_tag) -> None:
        """Send on, untouched, the payload `src` sent here with `tag`."""
        mailbox = self.functional.mailbox
        mailbox[(self.npu, dst, out_tag)] = mailbox.pop((src, self.npu, tag))


class RangeData(_PhaseData):
    """Parts of the range [lo, hi) of a 1-D buffer; `reduces=False` for an all-reduce of data the
    group has reduced already (ASTRA-sim's tree in an all-gather's place), whose adds would count twice."""

    def __init__(self, functional, npu, buffer: np.ndarray, lo: int, hi: int, parts: int, reduces: bool = True):
        super().__init__(functional, npu)
        self.buffer, self.lo, self.hi, self.parts, self.reduces = buffer, lo, hi, parts, reduces

    def bound(self, i: int) -> int:
        return self.lo + (self.hi - self.lo) * i // self.parts

    def take(self, i: int, j: int) -> np.ndarray:
        return self.buffer[self.bound(i):self.bound(j)].copy()

    def put(self, i: int, j: int, values: np.ndarray, reduce: bool) -> None:
        target = self.buffer[self.bound(i):self.bound(j)]
        if target.shape != values.shape:
            raise VerificationError(f"NPU {self.npu}: received {values.shape[0]} elements for parts {i}..{j} "
                                    f"holding {target.shape[0]}")
        if reduce and self.reduces:
            target += values
        else:
            target[:] = values


class SlotData(_PhaseData):
    """Parts along one axis of the per-rank slots; all-to-all lands into a fresh copy so sends read old slots."""

    def __init__(self, functional, npu, slots: np.ndarray, shape: tuple, axis: int, transpose: bool):
        super().__init__(functional, npu)
        self.view = slots.reshape(shape)
        self.axis = axis
        self.out = self.view.copy() if transpose else self.view

    def _index(self, i: int, j: int) -> tuple:
        index = [slice(None)] * self.view.ndim
        index[self.axis] = slice(i, j)
        return tuple(index)

    def take(self, i: int, j: int) -> np.ndarray:
        return self.view[self._index(i, j)].copy()

    def put(self, i: int, j: int, values: np.ndarray, reduce: bool) -> None:
        if reduce:
            raise VerificationError(f"NPU {self.npu}: an algorithm reduced slots of a gathering collective")
        self.out[self._index(i, j)] = values

    def end(self) -> None:
        if self.out is not self.view:
            self.view[...] = self.out


class _Chunk:
    """One chunk's payload on one NPU: creates each phase's data and advances the chunk's state."""

    def __init__(self, functional, npu: int, kind: str, comm, initial):
        self.functional, self.npu, self.kind, self.comm = functional, npu, kind, comm
        if kind in SLOTTED:
            self.slots = initial
        else:
            self.buffer = initial
            self.range = (0, len(initial))
            self.stack: list[tuple] = []

    def phase(self, phase, group: tuple, rank: int) -> _PhaseData:
        p = len(group)
        if self.kind in SLOTTED:
            if phase.dim is None:
                shape, axis = (len(self.slots),), 0
            else:
                shape, axis = self.comm.sizes[::-1], len(self.comm.dims) - 1 - self.comm.dims.index(phase.dim)
            data = SlotData(self.functional, self.npu, self.slots, shape, axis, phase.op == "all-to-all")
            data.finish = data.end
            return data
        if phase.op == "all-gather":  # widening back to the range the matching reduce-scatter split
            parent = self.stack.pop()
            data = RangeData(self.functional, self.npu, self.buffer, *parent, p)
            data.finish = lambda: setattr(self, "range", parent)
            return data
        data = RangeData(self.functional, self.npu, self.buffer, *self.range, p, reduces=not phase.repeat)
        if phase.op == "reduce-scatter":
            def narrow():
                self.stack.append(self.range)
                self.range = (data.bound(rank), data.bound(rank + 1))
            data.finish = narrow
        return data


class _Collective:
    """One collective's payload on one NPU: its input, chunks and (at the end) its output."""

    def __init__(self, functional, npu: int, kind: str, comm, nbytes: int, chunks: int, key):
        self.functional, self.npu, self.kind, self.comm, self.key = functional, npu, kind, comm, key
        self.rank = comm.members.index(npu)
        self.input = functional.input_for(key, npu, nbytes)
        n = len(comm.members)
        # the payload splits near-equally into the collective's chunks, whatever sizes its timing charges
        self.offsets = [nbytes * i // chunks for i in range(chunks + 1)]
        if kind in ("all-to-all", "scatter"):  # block j (for rank j) is chunked like the collective
            self.blocks = [np.array_split(block, chunks) for block in np.array_split(self.input, n)]
        self.chunks: list[_Chunk] = []

    def chunk(self, index: int) -> _Chunk:
        lo, hi = self.offsets[index], self.offsets[index + 1]
        n = len(self.comm.members)
        if self.kind in SLOTTED:
            initial = np.empty(n, dtype=object)
            if self.kind in ("all-gather", "gather"):
                initial[self.rank] = self.input[lo:hi].copy()
            elif self.kind == "all-to-all" or self.rank == 0:
                for j in range(n):
                    initial[j] = self.blocks[j][index].copy()
        else:
            initial = self.input[lo:hi].copy()
        chunk = _Chunk(self.functional, self.npu, self.kind, self.comm, initial)
        self.chunks.append(chunk)
        return chunk

    def finish(self) -> None:
        """Assemble what this NPU ends with and hand it to the verifier."""
        if self.kind == "gather" and self.rank != 0:
            output = None  # only the root gathers
        elif self.kind in ("all-gather", "gather", "all-to-all"):
            n = len(self.comm.members)
            output = np.concatenate([np.concatenate([c.slots[i] for c in self.chunks]) for i in range(n)]) \
                if self.chunks else np.zeros(0, np.int32)
        elif self.kind == "scatter":
            output = np.concatenate([c.slots[self.rank] for c in self.chunks]) if self.chunks else np.zeros(0, np.int32)
        elif self.kind == "reduce-scatter":
            output = [(int(self.offsets[i] + c.range[0]), c.buffer[c.range[0]:c.range[1]].copy())
                      for i, c in enumerate(self.chunks)]
        else:
            output = np.concatenate([c.buffer for c in self.chunks]) if self.chunks else np.zeros(0, np.int32)
        self.functional.outputs[self.key][self.npu] = output


MAX_ELEMENTS = 2**26  # payload elements a verified run may hold at once (4 bytes each)


class Functional:
    """Carries payloads for every System of a run and checks their results (see the module docstring)."""

    def __init__(self, systems, seed: int = 0):
        self.seed = seed
        self.mailbox: dict[tuple, np.ndarray] = {}
        self.inputs: dict[tuple, dict] = defaultdict(dict)
        self.outputs: dict[tuple, dict] = defaultdict(dict)
        self.kinds: dict[tuple, tuple] = {}
        self._count: dict[tuple, int] = defaultdict(int)
        self._records: dict[tuple, list] = defaultdict(list)
        for system in systems:
            system.functional = self

    def input_for(self, key, npu: int, nbytes: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, npu, len(self.inputs), nbytes])
        values = rng.integers(0, 1000, size=nbytes, dtype=np.int32)
        self.inputs[key][npu] = values
        return values

    def collective(self, system, kind: str, nbytes: int, comm, chunks: int) -> _Collective:
        """Called by `System.collective` in functional mode: the NPU's payload for this collective."""
        counter = (system.npu, comm.members)
        key = (comm.members, self._count[counter])
        self._count[counter] += 1
        self.kinds[key] = (kind, comm)
        self._records[key].append(system.records[-1])
        return _Collective(self, system.npu, kind, comm, nbytes, chunks, key)

    def verify(self) -> int:
        """Check every collective run so far; returns how many were checked, raises VerificationError if one is wrong."""
        for key, (kind, comm) in self.kinds.items():
            _check(kind, comm, self.inputs[key], self.outputs[key], self._records[key])
        if self.mailbox:
            raise VerificationError(f"{len(self.mailbox)} payloads were sent but never received")
        return len(self.kinds)


def _check(kind: str, comm, inputs: dict, outputs: dict, records: list) -> None:
    members = comm.members
    n = len(members)
    where = f"{kind} over NPUs {members[:8]}{'...' if n > 8 else ''}"

    def expect(npu, got, want, what):
        if not np.array_equal(got, want):
            raise VerificationError(f"{where}: NPU {npu} (rank {members.index(npu)}) holds the wrong {what}")

    if kind == "barrier":
        entered = max(r.issued_at for r in records)
        if any(r.finished_at < entered for r in records):
            raise VerificationError(f"{where}: an NPU left the barrier before the last one entered")
        return
    if len(outputs) != n:
        raise VerificationError(f"{where}: {len(outputs)} of {n} NPUs finished")
    total = sum(inputs[m] for m in members)
    root = members[0]
    if kind == "all-reduce":
        for m in members:
            expect(m, outputs[m], total, "sum")
    elif kind == "reduce":
        expect(root, outputs[root], total, "sum")
    elif kind == "broadcast":
        for m in members:
            expect(m, outputs[m], inputs[root], "broadcast data")
    elif kind in ("all-gather", "gather"):
        gathered = np.concatenate([inputs[m] for m in members])
        for m in (members if kind == "all-gather" else [root]):
            expect(m, outputs[m], gathered, "concatenation in rank order")
    elif kind == "all-to-all":
        blocks = {m: np.array_split(inputs[m], n) for m in members}
        for i, m in enumerate(members):
            expect(m, outputs[m], np.concatenate([blocks[src][i] for src in members]), "transposed blocks")
    elif kind == "scatter":
        blocks = np.array_split(inputs[root], n)
        for i, m in enumerate(members):
            expect(m, outputs[m], blocks[i], "scattered block")
    else:  # reduce-scatter: each share summed, and the shares tile the data exactly once
        covered = np.zeros(len(total), dtype=np.int64)
        for m in members:
            for start, values in outputs[m]:
                expect(m, values, total[start:start + len(values)], "reduced share")
                covered[start:start + len(values)] += 1
        if len(total) and not (covered == 1).all():
            raise VerificationError(f"{where}: the NPUs' shares do not tile the data exactly once")
