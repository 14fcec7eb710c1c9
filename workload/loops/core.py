"""The loop machinery: `NpuRun` (compute, issue, wait, per-layer stats) and the registry of loops by name.

A loop is a generator function `loop(run: NpuRun)`; `NpuRun` gives it compute, issuing
collectives and blocking waits, and records per-layer compute, exposed and total communication
(exposed = time the loop sits blocked on a collective, as ASTRA-sim defines it).
Add a loop with `@register_loop("NAME")`; the workload file's first word selects it. A loop
registered with a `role` (system.lockstep.Role: what an NPU's run depends on) may run in lockstep:
one representative NPU per class of NPUs that run alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generator

import simpy

from netsim.errors import ConfigError
from system.lockstep import Role
from workload.model import Comm, Workload

PASSES = ("fwd", "ig", "wg")


@dataclass
class LayerStats:
    """One layer on one NPU, summed over all passes (ns)."""

    compute: dict = field(default_factory=lambda: dict.fromkeys(PASSES, 0.0))
    exposed: dict = field(default_factory=lambda: dict.fromkeys(PASSES, 0.0))  # blocked while the collective ran
    exposed_update: dict = field(default_factory=lambda: dict.fromkeys(PASSES, 0.0))  # blocked on the weight update
    total_comm: dict = field(default_factory=lambda: dict.fromkeys(PASSES, 0.0))
    collectives: dict = field(default_factory=lambda: {p: [] for p in PASSES})  # CollectiveRecords


class NpuRun:
    """The state of one NPU's training loop: its system layer, the workload and what it measured.

    Besides per-layer sums it keeps the intervals it computed and the intervals a collective of
    its own was in flight, so the report can say how much communication compute hid (overlap).
    """

    def __init__(self, env: simpy.Environment, system, workload: Workload, passes: int):
        self.env = env
        self.system = system
        self.npu = system.npu
        self.endpoint = system.endpoint  # point-to-point messages (a representative's: system.lockstep's)
        self.workload = workload
        self.passes = passes
        self.layers = [LayerStats() for _ in workload.layers]
        self.compute_intervals: list[tuple[float, float]] = []
        self.comm_intervals: list[tuple[float, float]] = []
        self.finished_at: float | None = None
        self._collective_end: dict[simpy.Event, float] = {}  # issued event -> when its collective ended

    def compute(self, layer: int, phase: str, ns: float) -> simpy.Timeout:
        """Spend `ns` of compute on `layer`'s `phase` (fwd, ig or wg)."""
        self.layers[layer].compute[phase] += ns
        if ns > 0:
            self.compute_intervals.append((self.env.now, self.env.now + ns))
        return self.env.timeout(ns)

    def issue(self, layer: int, phase: str, comm: Comm, dims=None, *, group=None, shape=None, algorithm_dims=None,
              priority=None, update_ns: float | None = None) -> simpy.Event | None:
        """Start `layer`'s collective for `phase` without blocking; None when the layer has none.

        `dims` / `group` select the communicator (a subset of topology dimensions, or an explicit
        tuple of NPU ids, optionally with a `shape` and `algorithm_dims`: see System.collective);
        `priority` orders it in the dimension queues (lower first). The returned
        event fires `update_ns` after the collective ends (by default the layer's update time: as in
        ASTRA-sim, every collective of a layer, forward, input- or weight-gradient, completes one
        update time after its network part), which whoever waits on it waits for too.
        """
        if update_ns is None:
            update_ns = self.workload.layers[layer].update_time
        if not comm.active or self._alone(dims, group):
            return None  # as in ASTRA-sim, a collective no other NPU takes part in is none (no update time either)
        kwargs = {}
        if group is not None:
            kwargs["group"] = tuple(group)
        if shape is not None:
            kwargs.update(shape=tuple(shape), algorithm_dims=tuple(algorithm_dims))
        if priority is not None:
            kwargs["priority"] = priority
        process = self.system.collective(comm.kind, comm.nbytes, dims, **kwargs)
        stats = self.layers[layer]
        issued = self.env.now
        waited_on = process if update_ns <= 0 else self.env.process(self._then_update(process, update_ns))

        def finished(done: simpy.Event) -> None:
            if not done.ok:  # the failure reaches whoever waits on the collective
                return
            stats.total_comm[phase] += done.value.duration_ns
            stats.collectives[phase].append(done.value)
            self.comm_intervals.append((issued, self.env.now))
            self._collective_end[waited_on] = self.env.now

        process.callbacks.append(finished)
        return waited_on

    def _alone(self, dims, group) -> bool:
        """Whether the communicator is this NPU alone (no dimension of more than one NPU, or a group of one)."""
        if group is not None:
            return len(group) <= 1
        sizes = self.system.topology.dim_sizes
        return all(sizes[d] <= 1 for d in (range(len(sizes)) if dims is None else dims))

    def _then_update(self, process: simpy.Event, update_ns: float) -> Generator:
        yield process
        yield self.env.timeout(update_ns)

    def wait(self, layer: int, phase: str, event: simpy.Event | None) -> Generator:
        """Block until `event` fires; the time blocked is `layer`'s exposed communication for `phase`,
        split at the end of the collective: blocked after it, on the weight update that follows
        (`issue`'s update_ns), is exposed update time."""
        if event is None or event.processed:
            self._collective_end.pop(event, None)
            return
        started = self.env.now
        yield event
        stats = self.layers[layer]
        comm_end = max(started, self._collective_end.pop(event, self.env.now))
        stats.exposed[phase] += comm_end - started
        stats.exposed_update[phase] += self.env.now - comm_end

    def option(self, key: str, default=None):
        """A header option of the workload (`model_parallel_NPU_group: 4` -> [4]); `default` if absent."""
        return self.workload.options.get(key, default)


Loop = Callable[[NpuRun], Generator]
RoleOf = Callable[[NpuRun], Role]
LOOPS: dict[str, Loop] = {}
ROLES: dict[str, RoleOf] = {}


def register_loop(name: str, role: RoleOf | None = None) -> Callable[[Loop], Loop]:
    """Register a training loop under the keyword a workload file starts with; `role` gives an NPU's
    system.lockstep.Role (the loop promises its run depends on the NPU only through it)."""

    def register(loop: Loop) -> Loop:
        LOOPS[name.upper()] = loop
        if role is not None:
            ROLES[name.upper()] = role
        return loop

    return register


def role_for(workload: Workload) -> RoleOf | None:
    """The role function of the workload's loop (None: its NPUs never run in lockstep)."""
    return ROLES.get(workload.parallelism)


def loop_for(workload: Workload) -> Loop:
    loop = LOOPS.get(workload.parallelism)
    if loop is None:
        raise ConfigError(f"{workload.path or workload.name}: training loop '{workload.parallelism}' is not "
                          f"supported (supported: {', '.join(sorted(LOOPS))})")
    return loop
