"""Record the operations a training loop issues on each NPU, as dependency graphs for a Chakra trace.

The loop's own code runs (so a trace follows whatever the loop does), but against stand-ins for the
simulation: every compute, collective, send, receive and delay it asks for becomes an operation,
and nothing takes time. Each simpy process of the loop is a thread of program order whose clock is
set by the operations it last waited for (its *frontier*); a new operation depends on the frontier
of the thread that issues it. Waiting for an operation adds it to the frontier; computing replaces
the frontier (the compute started after everything in it). So when the graph is executed, every
operation starts exactly when the loop would have started it.

A weight update after a collective (the loop's `update_ns`) becomes a compute operation named
`LAYER.PASS.update` that depends on the collective (the loops' own reports count that wait as
exposed communication, a trace as compute; the times are the same).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generator, Hashable

from netsim.errors import ConfigError
from netsim.topology import Topology
from workload.loops import NpuRun, loop_for
from workload.model import Workload


@dataclass(frozen=True)
class Op:
    """One recorded operation: a trace node to be."""

    id: int
    name: str
    kind: str  # COMP, COMM_COLL, COMM_SEND, COMM_RECV
    deps: tuple
    duration_ns: float = 0.0  # COMP
    collective: str | None = None
    nbytes: int = 0
    dims: tuple | None = None  # COMM_COLL over these dimensions, or
    group: tuple | None = None  # over these NPUs
    shape: tuple | None = None  # the group's axes and the dimension whose algorithm each runs (see
    algorithm_dims: tuple | None = None  # System.collective)
    priority: float | None = None
    peer: int | None = None  # COMM_SEND: destination; COMM_RECV: source
    tag: Hashable = None


class _Token:
    """What the loop holds and may wait for in place of a simpy event: done when the operations
    `ends` are done. Never `processed`, so `NpuRun.wait` always waits, and the wait is recorded."""

    processed = False
    triggered = False
    ok = True

    def __init__(self, ends, value=None):
        self.ends = tuple(ends)
        self.value = value
        self.callbacks: list = []  # NpuRun.issue appends its statistics callback; never called


@dataclass
class _Thread:
    """A thread of program order: the operations its clock waits on, and what it returned."""

    frontier: list
    result: object = None


class Recorder:
    """The operations of one NPU, and the thread currently running."""

    def __init__(self, workload: Workload):
        self.workload = workload
        self.ops: list[Op] = []
        self.thread: _Thread | None = None
        self.context = ""  # the layer and pass whose collective is being issued (names its update)
        self.env = _Environment(self)

    def add(self, kind: str, name: str, **fields) -> _Token:
        op = Op(len(self.ops), name, kind, tuple(self.thread.frontier), **fields)
        self.ops.append(op)
        return _Token([op.id])

    def drive(self, generator: Generator, frontier: list) -> _Thread:
        """Run one thread (a loop or a process it starts) to its end, recording what it waits for."""
        thread, outer = _Thread(list(frontier)), self.thread
        self.thread = thread
        sent = None
        try:
            while True:
                token = generator.send(sent)
                if not isinstance(token, _Token):
                    raise ConfigError(f"{self.workload.path or self.workload.name}: the {self.workload.parallelism} "
                                      f"loop waits for {token!r}, which a trace cannot record")
                self._wait(thread, token)
                sent = token.value
        except StopIteration as stop:
            thread.result = stop.value
        finally:
            self.thread = outer
        return thread

    def _wait(self, thread: _Thread, token: _Token) -> None:
        for end in token.ends:
            if end not in thread.frontier:  # what `end` depended on is done before it: drop it
                deps = self.ops[end].deps
                thread.frontier = [op for op in thread.frontier if op not in deps] + [end]


class _StandIn:
    """A stand-in for part of the simulation: using what it does not provide is a one-line error."""

    recorder: Recorder

    def __getattr__(self, name: str):
        if name == "recorder":  # not set yet (copying, unpickling): no stand-in to speak of
            raise AttributeError(name)
        workload = self.recorder.workload
        raise ConfigError(f"{workload.path or workload.name}: the {workload.parallelism} loop uses "
                          f"{type(self).__name__.strip('_').lower()}.{name}, which to-chakra cannot record")


class _Environment(_StandIn):
    """The parts of simpy.Environment the loops use: time stands still, processes become threads."""

    now = 0.0

    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def process(self, generator: Generator) -> _Token:
        thread = self.recorder.drive(generator, self.recorder.thread.frontier)
        return _Token(thread.frontier, value=thread.result)

    def timeout(self, delay: float) -> _Token:
        """Only NpuRun's weight update waits this way (compute is recorded by _RecordingRun.compute)."""
        return self.recorder.add("COMP", f"{self.recorder.context or 'delay'}.update", duration_ns=delay)


class _Endpoint(_StandIn):
    """The NetworkAPI endpoint: sends and receives become operations."""

    def __init__(self, recorder: Recorder, npu: int):
        self.recorder = recorder
        self.npu = npu

    def send(self, dst: int, nbytes: int, tag: Hashable) -> _Token:
        return self.recorder.add("COMM_SEND", f"send {_tag_name(tag)} to {dst}", nbytes=nbytes, peer=dst, tag=tag)

    def post(self, dst: int, nbytes: int, tag: Hashable) -> None:
        self.send(dst, nbytes, tag)

    def recv(self, src: int, nbytes: int, tag: Hashable) -> _Token:
        return self.recorder.add("COMM_RECV", f"recv {_tag_name(tag)} from {src}", nbytes=nbytes, peer=src, tag=tag)


def _tag_name(tag: Hashable) -> str:
    return ".".join(map(str, tag)) if isinstance(tag, tuple) else str(tag)


class _System(_StandIn):
    """The parts of system.System the loops use; a collective becomes an operation."""

    def __init__(self, recorder: Recorder, npu: int, topology: Topology):
        self.recorder = recorder
        self.npu = npu
        self.topology = topology
        self.endpoint = _Endpoint(recorder, npu)

    def collective(self, kind: str, nbytes: int, dims=None, *, group=None, shape=None, algorithm_dims=None,
                   priority=None) -> _Token:
        if group is not None:
            dims = None
        else:
            dims = tuple(range(len(self.topology.dim_sizes))) if dims is None else tuple(sorted(set(dims)))
        return self.recorder.add("COMM_COLL", f"{self.recorder.context}.{kind}", collective=kind, nbytes=nbytes,
                                 dims=dims, group=None if group is None else tuple(group),
                                 shape=None if shape is None else tuple(shape),
                                 algorithm_dims=None if algorithm_dims is None else tuple(algorithm_dims),
                                 priority=priority)


class _RecordingRun(NpuRun):
    """NpuRun over the stand-ins: compute and collectives become operations named after layer and pass."""

    def __init__(self, recorder: Recorder, system: _System, workload: Workload, passes: int):
        super().__init__(recorder.env, system, workload, passes)
        self.recorder = recorder

    def compute(self, layer: int, phase: str, ns: float) -> _Token:
        if ns <= 0:  # takes no time: the thread's clock stays where it is
            return _Token(self.recorder.thread.frontier)
        return self.recorder.add("COMP", f"{self.workload.layers[layer].name}.{phase}", duration_ns=ns)

    def issue(self, layer: int, phase: str, comm, dims=None, **options):
        self.recorder.context = f"{self.workload.layers[layer].name}.{phase}"
        return super().issue(layer, phase, comm, dims, **options)


def record(workload: Workload, topology: Topology, passes: int = 1) -> list[list[Op]]:
    """The operations of `passes` iterations of `workload`'s loop, per NPU of `topology`."""
    loop = loop_for(workload)
    graphs = []
    for npu in range(topology.npus):
        recorder = Recorder(workload)
        run = _RecordingRun(recorder, _System(recorder, npu, topology), workload, passes)
        recorder.drive(loop(run), [])
        graphs.append(recorder.ops)
    return graphs
