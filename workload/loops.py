"""Training loops: simpy processes that walk a workload's layers on one NPU, registered by name.

A loop is a generator function `loop(run: NpuRun)`; `NpuRun` gives it compute, issuing
collectives and blocking waits, and records per-layer compute, exposed and total communication
(exposed = time the loop sits blocked on a collective, as ASTRA-sim defines it).
Add a loop with `@register_loop("NAME")`; the workload file's first word selects it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generator

import simpy

from netsim.errors import ConfigError
from workload.model import Comm, Workload

PASSES = ("fwd", "ig", "wg")


@dataclass
class LayerStats:
    """One layer on one NPU, summed over all passes (ns)."""

    compute: dict = field(default_factory=lambda: dict.fromkeys(PASSES, 0.0))
    exposed: dict = field(default_factory=lambda: dict.fromkeys(PASSES, 0.0))
    total_comm: dict = field(default_factory=lambda: dict.fromkeys(PASSES, 0.0))
    collectives: dict = field(default_factory=lambda: {p: [] for p in PASSES})  # CollectiveRecords


class NpuRun:
    """The state of one NPU's training loop: its system layer, the workload and what it measured."""

    def __init__(self, env: simpy.Environment, system, workload: Workload, passes: int):
        self.env = env
        self.system = system
        self.npu = system.npu
        self.workload = workload
        self.passes = passes
        self.layers = [LayerStats() for _ in workload.layers]
        self.finished_at: float | None = None

    def compute(self, layer: int, phase: str, ns: float) -> simpy.Timeout:
        """Spend `ns` of compute on `layer`'s `phase` (fwd, ig or wg)."""
        self.layers[layer].compute[phase] += ns
        return self.env.timeout(ns)

    def issue(self, layer: int, phase: str, comm: Comm, dims=None) -> simpy.Event | None:
        """Start `layer`'s collective for `phase` without blocking; None when the layer has none."""
        if not comm.active:
            return None
        event = self.system.collective(comm.kind, comm.nbytes, dims)
        stats = self.layers[layer]

        def finished(done: simpy.Event) -> None:
            stats.total_comm[phase] += done.value.duration_ns
            stats.collectives[phase].append(done.value)

        event.callbacks.append(finished)
        return event

    def wait(self, layer: int, phase: str, event: simpy.Event | None) -> Generator:
        """Block until `event` fires; the time blocked is `layer`'s exposed communication for `phase`."""
        if event is None or event.processed:
            return
        started = self.env.now
        yield event
        self.layers[layer].exposed[phase] += self.env.now - started


Loop = Callable[[NpuRun], Generator]
LOOPS: dict[str, Loop] = {}


def register_loop(name: str) -> Callable[[Loop], Loop]:
    """Register a training loop under the keyword a workload file starts with."""

    def register(loop: Loop) -> Loop:
        LOOPS[name.upper()] = loop
        return loop

    return register


def loop_for(workload: Workload) -> Loop:
    loop = LOOPS.get(workload.parallelism)
    if loop is None:
        raise ConfigError(f"{workload.path or workload.name}: training loop '{workload.parallelism}' is not "
                          f"supported yet (supported: {', '.join(sorted(LOOPS))})")
    return loop


@register_loop("DATA")
def data_parallel(run: NpuRun) -> Generator:
    """Data parallelism (ASTRA-sim's DATA loop).

    Forward, layer by layer: first wait for the layer's weight-gradient all-reduce of the previous
    pass, then compute. Backward, from the last layer: weight-gradient compute, issue its
    collective without blocking, then input-gradient compute (skipped for the first layer, which
    has no input gradient to pass on). The run ends when every outstanding collective is done.
    """
    layers = run.workload.layers
    pending: list[simpy.Event | None] = [None] * len(layers)
    for _ in range(run.passes):
        for i, layer in enumerate(layers):
            yield from run.wait(i, "wg", pending[i])
            yield run.compute(i, "fwd", layer.fwd_compute)
        for i in reversed(range(len(layers))):
            layer = layers[i]
            yield run.compute(i, "wg", layer.wg_compute)
            pending[i] = run.issue(i, "wg", layer.wg_comm)
            if i > 0:
                yield run.compute(i, "ig", layer.ig_compute)
    for i in range(len(layers)):
        yield from run.wait(i, "wg", pending[i])
