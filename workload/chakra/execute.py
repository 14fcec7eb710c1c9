"""Execute a Chakra trace as ASTRA-sim 2.x does: on each NPU, issue every node whose dependencies
have finished, in node-id order.

- COMP runs for its duration (or by the roofline, see `ComputeModel`);
- COMM_COLL is a collective of the system layer over its dimensions or communicator group;
- COMM_SEND / COMM_RECV go through the NetworkAPI endpoints (`Messages`); as in ASTRA-sim's
  analytical backends, a send finishes when its message has been delivered, a receive once the
  message has arrived and the receive was issued;
- MEM_LOAD / MEM_STORE are served by the remote memory (workload.chakra.memory);
- METADATA and INVALID nodes finish at once.

`in_flight` (0 = no limit) caps the nodes each NPU runs at once per engine: compute (COMP),
host (COMP with is_cpu_op) and communication (all other nodes but receives, which are never held
back). ASTRA-sim 2.x runs one per engine (`in_flight = 1`); a held-back node starts,
lowest id first, when its engine frees.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from dataclasses import dataclass

import simpy

from workload.chakra.memory import RemoteMemory
from workload.chakra.trace import NpuTrace, TraceNode
from workload.roofline import Roofline

COMMUNICATION = ("COMM_COLL", "COMM_SEND", "COMM_RECV", "MEM_LOAD", "MEM_STORE")


@dataclass(frozen=True)
class ComputeModel:
    """How long a COMP node takes: its recorded duration, or with a roofline (the system config's
    `roofline-enabled`), `num_ops` and `tensor_size` on it when the node gives them (host ops are
    always replayed). A node whose tensor_size is 0 then takes no time (ASTRA-sim skips it)."""

    roofline: Roofline | None = None

    @classmethod
    def of_system(cls, config) -> "ComputeModel":
        if not config.roofline_enabled:
            return cls()
        return cls(Roofline(peak_tflops=config.peak_perf, memory_GBps=config.local_mem_bw))

    def duration_ns(self, node: TraceNode) -> float:
        if self.roofline is not None and not node.is_cpu_op and node.num_ops is not None:
            return self.roofline.op_ns(node.num_ops, node.tensor_size) if node.tensor_size else 0.0
        return node.duration_ns


class Messages:
    """The point-to-point messages of one trace run, matched in order per (source, destination, tag).

    Issuing a send also posts its receive at the destination endpoint, so the message's delivery
    is known whenever the receive node is issued (before, after or never): the k-th send of a key
    finishes at the k-th delivery, and the k-th receive node waits for that same delivery.
    """

    def __init__(self, env: simpy.Environment, systems: list):
        self.env = env
        self.endpoints = [system.endpoint for system in systems]
        self.deliveries: dict[tuple, list] = defaultdict(list)  # key -> the k-th message's delivery event
        self.sends: Counter = Counter()
        self.receives: Counter = Counter()

    def _delivery(self, key: tuple, index: int) -> simpy.Event:
        events = self.deliveries[key]
        while len(events) <= index:
            events.append(self.env.event())
        return events[index]

    def send(self, src: int, dst: int, nbytes: int, tag: int) -> simpy.Event:
        key = (src, dst, tag)
        delivery = self._delivery(key, self.sends[key])
        self.sends[key] += 1
        self.endpoints[src].post(dst, nbytes, ("p2p", tag))
        self.endpoints[dst].recv(src, nbytes, ("p2p", tag)).callbacks.append(lambda _arrived: delivery.succeed())
        return delivery

    def receive(self, src: int, dst: int, tag: int) -> simpy.Event:
        key = (src, dst, tag)
        self.receives[key] += 1
        return self._delivery(key, self.receives[key] - 1)


def engine_of(node: TraceNode) -> str | None:
    """The engine a node occupies while it runs (None: never held back). As in ASTRA-sim 2.x, every
    node but compute and receives, metadata and invalid nodes included, counts as communication."""
    if node.kind == "COMP":
        return "host" if node.is_cpu_op else "compute"
    return None if node.kind == "COMM_RECV" else "communication"


class NpuExecution:
    """One NPU running its graph; records when each node started and finished."""

    def __init__(self, env: simpy.Environment, system, trace: NpuTrace, compute: ComputeModel, messages: Messages,
                 memory: RemoteMemory | None, in_flight: int = 0):
        self.env = env
        self.system = system
        self.messages = messages
        self.trace = trace
        self.npu = trace.npu
        self.compute = compute
        self.memory = memory
        self.in_flight = in_flight
        self.nodes = {node.id: node for node in trace.nodes}
        self.unfinished_deps = {node.id: len(node.deps) for node in trace.nodes}
        self.ready: list[int] = []  # heap of ids whose dependencies are done, not yet started
        self.busy: Counter = Counter()
        self.started: dict[int, float] = {}
        self.finished: dict[int, float] = {}
        self.finished_at: float | None = None

    def start(self) -> None:
        """Issue the nodes that depend on nothing (call once, at time 0)."""
        self.ready = [node.id for node in self.trace.nodes if not node.deps]
        heapq.heapify(self.ready)
        self._issue_ready()

    def _issue_ready(self) -> None:
        held = []
        while self.ready:
            node = self.nodes[heapq.heappop(self.ready)]
            engine = engine_of(node)
            if engine is not None and self.in_flight and self.busy[engine] >= self.in_flight:
                held.append(node.id)
                continue
            self._issue(node, engine)
        for node_id in held:
            heapq.heappush(self.ready, node_id)
        if self.finished_at is None and len(self.finished) == len(self.nodes):
            self.finished_at = self.env.now

    def _issue(self, node: TraceNode, engine: str | None) -> None:
        self.started[node.id] = self.env.now
        if engine is not None:
            self.busy[engine] += 1
        event = self._event(node)
        if event is None or event.processed:  # nothing to do, or done already (a send the network took at once)
            self._finish(node, engine)
        else:
            event.callbacks.append(lambda done: self._done(done, node, engine))

    def _event(self, node: TraceNode) -> simpy.Event | None:
        """Start the node's work; the event that fires when it is done (None: nothing to do)."""
        if node.kind == "COMP":
            return self.env.timeout(self.compute.duration_ns(node))
        if node.kind == "COMM_COLL":
            return self.system.collective(node.collective, node.nbytes, node.dims, group=node.group,
                                          shape=node.shape, algorithm_dims=node.algorithm_dims, priority=node.priority)
        if node.kind == "COMM_SEND":
            return self.messages.send(self.npu, node.peer, node.nbytes, node.tag)
        if node.kind == "COMM_RECV":
            return self.messages.receive(node.peer, self.npu, node.tag)
        if node.kind in ("MEM_LOAD", "MEM_STORE"):
            return self.memory.access(self.npu, node.tensor_size)
        return None

    def _done(self, event: simpy.Event, node: TraceNode, engine: str | None) -> None:
        if not event.ok:  # the failure propagates from the simulation loop
            return
        self._finish(node, engine)
        self._issue_ready()

    def _finish(self, node: TraceNode, engine: str | None) -> None:
        self.finished[node.id] = self.env.now
        if engine is not None:
            self.busy[engine] -= 1
        for child in self.trace.children[node.id]:
            self.unfinished_deps[child] -= 1
            if self.unfinished_deps[child] == 0:
                heapq.heappush(self.ready, child)

    def stuck(self) -> list[str]:
        """What keeps an unfinished run from progressing: running nodes and what waiting nodes wait for."""
        lines = []
        for node_id, started in self.started.items():
            if node_id not in self.finished:
                node = self.nodes[node_id]
                lines.append(f"NPU {self.npu} {node.label} ({_describe(node)}) started at {started:.1f} ns and "
                             f"never finished")
        for node_id in self.ready:
            lines.append(f"NPU {self.npu} {self.nodes[node_id].label} waits for its engine")
        for node in self.trace.nodes:
            if node.id not in self.started and self.unfinished_deps[node.id] > 0:
                waits = [dep for dep in node.deps if dep not in self.finished]
                lines.append(f"NPU {self.npu} {node.label} waits for nodes {waits}")
        return lines


def start_trace(env: simpy.Environment, systems: list, trace, compute: ComputeModel, memory: RemoteMemory | None,
                in_flight: int = 0) -> list[NpuExecution]:
    """Start every NPU's graph at time 0 (one System per NPU, rank order); the executions, to read after the run."""
    messages = Messages(env, systems)
    runs = [NpuExecution(env, system, npu_trace, compute, messages, memory, in_flight)
            for system, npu_trace in zip(systems, trace.npus)]
    for run in runs:
        run.start()
    return runs


def _describe(node: TraceNode) -> str:
    if node.kind == "COMM_COLL":
        over = f"NPUs {list(node.group)}" if node.group else f"dimensions {list(node.dims)}"
        return f"{node.collective} of {node.nbytes} B over {over}"
    if node.kind == "COMM_SEND":
        return f"send of {node.nbytes} B to NPU {node.peer}, tag {node.tag}"
    if node.kind == "COMM_RECV":
        return f"receive of {node.nbytes} B from NPU {node.peer}, tag {node.tag}"
    return node.kind
