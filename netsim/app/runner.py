"""Wire workload -> system -> network for one run (only the shell, netsim.app, imports all three layers).

Each entry point returns a `RunResult`: the `summary` dict (summary.json) and named tables
(each written as NAME.csv; netsim.app.outputs writes them into one output folder).

A run takes an optional `RunMonitor` (netsim.app.progress): it shows progress, samples link counters
(link_timeseries.csv) and stops the run on Ctrl-C; a stopped run still returns its result, with
`partial: true` and everything measured up to the moment it stopped.

The workload layer, pandas and the reports are imported by the functions that use them, so a
collective reaches its first simulated cycle without them, and the system layer too, so `netsim
synth` (which needs only `network_summary` here) never imports it (start-up: scripts/bench_startup.py).
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from netsim.backends import congestion_aware_backends
from netsim.budget import Budget
from netsim.collector import rare_garbage_collection
from netsim.errors import ConfigError, DeadlockError, MirrorMismatch, PartitionConflict, QuotientConflict
from netsim.network_config import NetworkConfig
from netsim.network_plan import NetworkPlan, plan_network
from netsim.app.progress import RunMonitor
from netsim.units import format_size

if TYPE_CHECKING:
    import pandas as pd

    from system import SystemConfig

    from workload import Workload
    from workload.chakra import MemoryConfig


@dataclass
class RunResult:
    """What a run produced: summary.json's content and the tables written as CSV (DataFrames, or plain
    columns where a command writes them without pandas: netsim.csv_text)."""

    name: str
    summary: dict
    tables: dict = field(default_factory=dict)


def network_summary(network, plan: NetworkPlan, system_cfg: SystemConfig | None, wall: float,
                    seed: int, partial: bool, tables: dict, notes: list[str]) -> dict:
    """The summary's entries every simulation has: backend, cost, seed, configs and link loading, and
    the backend's own (its plan's `summary`: the packet backend's settings, fast-forward, folding).

    `warnings` (one line each) are `notes` (said before or during the run: netsim.budget's), the
    network's own (`Network.warnings`: what the run went through) and, on a backend that does not
    model congestion, an oversubscribed link."""
    from netsim.app import report

    network_cfg = plan.config
    links, series = tables["links"], tables.get("link_timeseries")
    peak, busiest = report.max_utilization(links)
    interval_peak, interval_row = report.peak_interval_utilization(links, series)
    warning = None
    if not network.models_congestion:
        warning = report.oversubscription_warning((peak, busiest), (interval_peak, interval_row),
                                                  network.backend_name, congestion_aware_backends())
    summary = {
        "max_link_utilization": peak,
        "max_link_utilization_link": None if busiest is None else int(busiest["link_id"]),
        "peak_interval_link_utilization": interval_peak,
        "warnings": [*notes, *network.warnings, *([warning] if warning else [])],
        "backend": network.backend_name,
        "wall_time_s": wall,
        "events": network.events_so_far(),
        "simulated_time_ns": network.env.now,
        "partial": partial,
        "seed": seed,
        "network": {"name": network_cfg.name, "path": network_cfg.path, "topology": network.topology.summary(),
                    "config": network_cfg.table},
    }
    if any(str(column).endswith("_cycles") for table in tables.values() for column in table):
        summary["cycle_ns"] = 1.0 / network_cfg.garnet.clock_ghz  # the packet backend's clock period
    summary.update(plan.backend.summary(network))
    if system_cfg is not None:
        summary["system"] = system_cfg.as_table()
    return summary


def chunks_per_npu(system_cfg: SystemConfig, collectives: list[tuple[str, int]]) -> int:
    """Chunks of `collectives` (kind, bytes per NPU) in flight on one NPU at most (each at once)."""
    splits = system_cfg.preferred_dataset_splits
    return sum(1 if kind == "barrier" else max(1, min(splits, nbytes)) for kind, nbytes in collectives)


def workload_collectives(workload: Workload) -> list[tuple[str, int]]:
    """(kind, bytes per NPU) of every collective a pass of `workload` issues, layer by layer."""
    return [(comm.kind, comm.nbytes) for layer in workload.layers
            for comm in (layer.fwd_comm, layer.ig_comm, layer.wg_comm) if comm.active]


def plan_for(network: NetworkConfig | NetworkPlan, system_cfg: SystemConfig, collectives: list[tuple[str, int]],
             what: str) -> NetworkPlan:
    """The run's network plan (made now from a config, or the one the caller made), checked to fit in
    memory with the chunks of `collectives` on every NPU and the packets of the largest
    (netsim.network_plan)."""
    largest = max((nbytes for _, nbytes in collectives), default=0)
    chunks = chunks_per_npu(system_cfg, collectives)
    if isinstance(network, NetworkPlan):
        network.check(what, chunks, largest)
        return network
    return plan_network(network, what, chunks, largest)


def budget(network, system, collectives: list[tuple[str, int]], passes: int) -> Budget:
    """What a run of `collectives` (kind, bytes per NPU; each in flight at once at worst) for
    `passes` will hold and move (netsim.budget), from NPU 0's plan. Flit-hops are counted for a
    backend with flits (its `flit_bytes`), one hop per byte sent: a lower bound on the work."""
    npus = network.topology.npus
    chunks = chunks_per_npu(system.config, collectives)
    flit_bytes = getattr(network, "flit_bytes", None)
    if not flit_bytes:
        return Budget(npus, chunks)
    per_pass = sum(system.planned_bytes(kind, nbytes) for kind, nbytes in collectives)
    return Budget(npus, chunks, npus * passes * per_pass / flit_bytes, network.config.fidelity)


def _attempts(attempt, plan: NetworkPlan, monitor: RunMonitor, symmetric: bool = True) -> RunResult:
    """`attempt(symmetric, plan)`, which may run symmetric collectives and lockstep classes as one
    NPU, and again where it cannot finish as it began: per message where the packet backend found a
    message's copies arriving apart (MirrorMismatch: not symmetric there after all), with the
    whole-network fast-forward where a message started through ports its fast-forward per partition had
    moved ahead (PartitionConflict), with every copy sent where traffic did not fit the quotient a symmetric
    run was folded onto (QuotientConflict); each time saying so in the summary's warnings. Each attempt,
    building its network and systems too, runs with the garbage collector rare
    (api.rare_garbage_collection): building a 4096-NPU packet network ran 13 full collections, 3.3 of its
    7.6 s."""
    while True:
        try:
            with rare_garbage_collection():
                return attempt(symmetric, plan)
        except MirrorMismatch as mismatch:
            why = f"{mismatch}: simulated again per message"  # (outside this block the first attempt is let go)
            symmetric = False
        except PartitionConflict as conflict:
            why = f"{conflict}: simulated again with garnet.fast_forward = 'network'"
            plan = plan.with_garnet(fast_forward="network")
        except QuotientConflict as conflict:
            why = f"{conflict}: simulated again with garnet.symmetry = 'copies'"
            plan = plan.with_garnet(symmetry="copies")
        gc.collect()  # the first attempt's network holds reference cycles: freed before the second is built
        monitor.restart(monitor.title, None)
        monitor.note(why)


def _check_finished(network, unfinished: list[int], waits: list[str] = ()) -> None:
    """A run whose loops did not all finish cannot progress: say who waits on whom (`waits` first,
    then the receives the network could not match)."""
    if not unfinished:
        return
    waiting = [*waits, *network.waiting()]
    detail = "; ".join(waiting[:4]) + (f"; ... ({len(waiting)} waits in all)" if len(waiting) > 4 else "")
    raise DeadlockError(f"simulation stopped at {network.env.now:.1f} ns with NPUs {unfinished[:8]} unfinished"
                        f"{': ' + detail if detail else ''}")


def _network_tables(network, monitor: RunMonitor) -> dict[str, pd.DataFrame]:
    """The backend's tables (links, npus, and what else it reports) and the link time series."""
    return {**network.stats(), "link_timeseries": monitor.sampler.frame()}


def _simulate(network, monitor: RunMonitor) -> bool:
    """Run to the end (or to Ctrl-C); True if stopped early."""
    stopped = network.run(monitor=monitor)
    monitor.finish(network)
    return stopped


def training_tracker(runs: list, systems: list, workload: Workload, passes: int):
    """Progress of a training run: bytes delivered over the bytes the run will deliver, all NPUs.

    The total is, per NPU, the larger of the workload's collectives planned over every dimension
    for all passes (exact for data parallelism; an estimate where a loop uses smaller groups or
    more collectives) and the collectives issued so far; point-to-point bytes (pipeline
    activations) count once sent. A run without communication shows its compute. Packets, not
    compute, take the wall time, so the ETA from this fraction holds steady.
    """
    per_pass = sum(layer.fwd_compute + layer.ig_compute + layer.wg_compute for layer in workload.layers) or 1
    expected_compute = per_pass * passes
    comms = [comm for layer in workload.layers for comm in (layer.fwd_comm, layer.ig_comm, layer.wg_comm)
             if comm.active]
    prior = [passes * sum(system.planned_bytes(comm.kind, comm.nbytes) for comm in comms) for system in systems]

    def track(network) -> tuple[float, str]:
        if all(run.finished_at is not None for run in runs):
            return 1.0, f"pass {passes}/{passes}, done"
        compute = [min(1.0, sum(sum(stats.compute.values()) for stats in run.layers) / expected_compute)
                   for run in runs]
        issued = [sum(record.planned_bytes for record in run.system.records) for run in runs]  # a follower: its
        # representative's
        expected = sum(max(p, i) for p, i in zip(prior, issued))
        expected += max(0.0, sum(network.bytes_sent) - sum(issued))  # point-to-point bytes sent
        delivered = sum(network.bytes_received)
        done = delivered / expected if expected > 0 else sum(compute) / len(compute)
        pass_index = min(passes, int(compute[0] * passes) + 1)
        text = f"pass {pass_index}/{passes} (NPU 0)"
        if expected > 0:
            text += f", {format_size(delivered)} of ~{format_size(expected)} delivered"
        return min(done, 0.999), text

    return track


def _timing_summary(network, finish_times: list, per_npu: list[dict], npu0_extra: dict) -> dict:
    """End-to-end time (the last NPU to finish, or now for an unfinished one) and per-NPU totals;
    compute and exposed communication of NPU 0, as ASTRA-sim reports them, then `npu0_extra`."""
    end_times = [network.env.now if t is None else t for t in finish_times]
    return {
        "end_to_end_time_ns": max(end_times),
        "compute_time_ns": per_npu[0]["compute_time_ns"],
        "exposed_comm_time_ns": per_npu[0]["exposed_comm_time_ns"],
        **npu0_extra,
        "npu_finish_time_ns": finish_times,
        "npu_compute_time_ns": [t["compute_time_ns"] for t in per_npu],
        "npu_exposed_comm_time_ns": [t["exposed_comm_time_ns"] for t in per_npu],
        "slowest_npu": max(range(len(end_times)), key=lambda i: end_times[i]),
    }


def run_training(network: NetworkConfig | NetworkPlan, system_cfg: SystemConfig, workload: Workload, passes: int = 1,
                 seed: int = 0, monitor: RunMonitor | None = None) -> RunResult:
    """Simulate `passes` training iterations of `workload` on every NPU (of a network config, or of the
    plan made of it)."""
    monitor = monitor or RunMonitor()
    started = time.perf_counter()
    comms = workload_collectives(workload)
    with rare_garbage_collection():
        plan = plan_for(network, system_cfg, comms, f"this run of {workload.name}")
    return _attempts(lambda symmetric, plan: _training(plan, system_cfg, workload, comms, passes, seed, monitor,
                                                       started, symmetric), plan, monitor)


def _training(plan: NetworkPlan, system_cfg: SystemConfig, workload: Workload, comms: list[tuple[str, int]],
              passes: int, seed: int, monitor: RunMonitor, started: float, symmetric: bool) -> RunResult:
    """run_training's simulation (`symmetric`: see _attempts)."""
    from system import build_systems
    from system.lockstep import plan_lockstep
    from workload import NpuRun, loop_for
    from workload.loops.core import role_for
    from workload.report import detailed_frame, end_to_end_frame, overlap, totals

    loop = loop_for(workload)
    what = f"this run of {workload.name}"
    network = plan.create_network(seed=seed)
    systems = build_systems(network, system_cfg, symmetric)
    for line in budget(network, systems[0], comms, passes).check(what):
        monitor.note(line)
    runs = [NpuRun(network.env, system, workload, passes) for system in systems]
    role_of = role_for(workload)
    lockstep = None if role_of is None else plan_lockstep(systems, lambda npu: role_of(runs[npu]))
    if lockstep is not None:  # only each class's representative runs; the others follow its timeline
        for npu in lockstep.representatives():
            runs[npu].endpoint = lockstep.endpoint(npu, systems[npu].endpoint)
        runs = [runs[npu] for npu in lockstep.representative]

    def mark_finished(run: NpuRun):
        return lambda _event: setattr(run, "finished_at", network.env.now)

    for npu, run in enumerate(runs):
        if run.npu == npu:
            network.env.process(loop(run)).callbacks.append(mark_finished(run))
    monitor.tracker = training_tracker(runs, systems, workload, passes)
    partial = _simulate(network, monitor)
    if not partial:
        _check_finished(network, [npu for npu, run in enumerate(runs) if run.finished_at is None])
    wall = time.perf_counter() - started

    finish_times = [run.finished_at for run in runs]  # None: not finished (partial run)
    tables = {"end_to_end": end_to_end_frame(runs[0]), "detailed": detailed_frame(runs[0]),
              **_network_tables(network, monitor)}
    measured = {npu: totals(run) for npu, run in enumerate(runs) if run.npu == npu}  # each simulated NPU once
    per_npu = [measured[run.npu] for run in runs]
    first = per_npu[0]
    summary = {
        "name": f"{workload.name}-{plan.config.name}",
        **_timing_summary(network, finish_times, per_npu, {"exposed_update_time_ns": first["exposed_update_time_ns"],
                                                           **overlap(runs[0]), "passes": passes}),
        **network_summary(network, plan, systems[0].config, wall, seed, partial, tables, monitor.notes),
        "workload": {"name": workload.name, "path": workload.path, "loop": workload.parallelism,
                     "layers": len(workload.layers)},
        "simulated_npus": len(measured),  # fewer than the NPUs when alike ones ran in lockstep
    }
    if workload.parallelism.startswith("PIPELINE_") and first["compute_time_ns"] > 0 and not partial:
        # idle time over compute of the first stage (NPU 0): the bubble fraction of the schedule
        summary["pipeline_bubble_fraction"] = (finish_times[0] - first["compute_time_ns"]) / first["compute_time_ns"]
    return RunResult(summary["name"], summary, tables)


def trace_tracker(runs: list, trace):
    """Progress of a trace run: nodes finished over all nodes of all NPUs."""
    total = trace.node_count() or 1

    def track(network) -> tuple[float, str]:
        done = sum(len(run.finished) for run in runs)
        return done / total, f"{done:,} of {total:,} nodes done"

    return track


def run_trace(network: NetworkConfig | NetworkPlan, system_cfg: SystemConfig, spec: str | Path, comm_groups: dict | None = None,
              memory: MemoryConfig | None = None, in_flight: int = 0, seed: int = 0,
              monitor: RunMonitor | None = None) -> RunResult:
    """Execute the Chakra trace `spec` (a folder or `PREFIX` of `PREFIX.<rank>.et` files) on every NPU.

    `comm_groups`: communicator groups by number (`pg_name`); `memory`: the remote memory for MEM nodes;
    `in_flight`: nodes each NPU runs at once per engine (0 = no limit; ASTRA-sim 2.x: 1).
    """
    from system import build_systems
    from workload.chakra import ComputeModel, RemoteMemory, check_memory, load_trace, start_trace
    from workload.chakra.report import nodes_frame, npu_totals

    monitor = monitor or RunMonitor()
    started = time.perf_counter()
    plan = plan_for(network, system_cfg, [], f"this run of {spec}")
    trace = load_trace(spec, plan.topology, comm_groups)
    check_memory(trace, memory)
    largest = trace.largest_message()
    if largest is not None:
        npu, node = largest
        plan.check(f"{npu.where(node)}: its message of {node.nbytes:,} B", largest_message=node.nbytes)

    def attempt(_symmetric: bool, plan: NetworkPlan) -> RunResult:
        network = plan.create_network(seed=seed)
        systems = build_systems(network, system_cfg, symmetric=False)  # a trace's later nodes overlap its roots
        compute = ComputeModel.of_system(system_cfg)
        remote = RemoteMemory(network.env, memory) if memory is not None else None
        runs = start_trace(network.env, systems, trace, compute, remote, in_flight)
        monitor.tracker = trace_tracker(runs, trace)
        partial = _simulate(network, monitor)
        if not partial:
            _check_finished(network, [run.npu for run in runs if run.finished_at is None],
                            [line for run in runs for line in run.stuck()])
        wall = time.perf_counter() - started

        per_npu = [npu_totals(run, network.env.now) for run in runs]
        overlap0 = {key: per_npu[0][key] for key in ("comm_busy_time_ns", "compute_comm_overlap_ns", "overlap_fraction")}
        tables = {"nodes": nodes_frame(runs), **_network_tables(network, monitor)}
        summary = {
            "name": f"{trace.name}-{plan.config.name}",
            **_timing_summary(network, [run.finished_at for run in runs], per_npu, overlap0),
            **network_summary(network, plan, systems[0].config, wall, seed, partial, tables, monitor.notes),
            "workload": {"name": trace.name, "path": str(trace.prefix), "format": "chakra", "nodes": trace.node_count(),
                         "in_flight": in_flight, "memory": memory.path if memory is not None else None},
        }
        return RunResult(summary["name"], summary, tables)

    return _attempts(attempt, plan, monitor, symmetric=False)


BUS_FACTOR = {  # nccl-tests: busbw = algbw * factor(n)
    "all-reduce": lambda n: 2 * (n - 1) / n,
    "reduce-scatter": lambda n: (n - 1) / n,
    "all-gather": lambda n: (n - 1) / n,
    "all-to-all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "gather": lambda n: (n - 1) / n,
    "scatter": lambda n: (n - 1) / n,
    "barrier": lambda n: 0.0,
}


def collective_tracker(systems: list, events: list):
    """Progress of a collective: bytes delivered over the bytes its algorithms will send (their
    closed forms, summed when every NPU issued it); 100% once every NPU has finished."""
    expected = sum(record.planned_bytes for system in systems for record in system.records)

    def track(network) -> tuple[float, str]:
        delivered = sum(network.bytes_received)
        text = f"{format_size(delivered)} of {format_size(expected)} delivered"
        if all(event.processed for event in events):
            return 1.0, text
        return min(0.999, delivered / expected if expected > 0 else 0.0), text

    return track


RING_COLLECTIVES = ("all-reduce", "reduce-scatter", "all-gather")


def store_and_forward_caveat(network, system_cfg: SystemConfig, kind: str) -> list[str]:
    """A warning when the congestion-aware backend's store-and-forward makes a ring collective
    through a switch pessimistic: each ring step's message is serialized twice (into the switch,
    then out), where packets cut through, so with nothing else contending the time comes out up to
    about 2x the packet backend's."""
    if not network.stores_and_forwards or kind not in RING_COLLECTIVES:
        return []
    algorithms = system_cfg.algorithms(kind)
    switched = [d for d, dim in enumerate(network.topology.dims)
                if dim.kind == "switch" and algorithms[min(d, len(algorithms) - 1)] == "ring"]
    if not switched:
        return []
    return [f"the congestion-aware backend stores and forwards whole messages, so each ring step through the "
            f"switch of dimension {', '.join(map(str, switched))} pays its serialization twice where packets cut "
            f"through: this {kind} may take up to about 2x the packet backend's time (--backend garnet)"]


def run_collective(network: NetworkConfig | NetworkPlan, system_cfg: SystemConfig, kind: str, nbytes: int,
                   seed: int = 0, verify: bool = False, monitor: RunMonitor | None = None) -> RunResult:
    """Every NPU issues one `kind` collective of `nbytes` at time 0 (on a network config, or the plan made
    of it); report its time and bandwidths.

    With `verify`, the collective carries real payloads and every NPU's result is checked
    (system.functional); a wrong result raises VerificationError.
    """
    monitor = monitor or RunMonitor()
    started = time.perf_counter()
    with rare_garbage_collection():
        plan = plan_for(network, system_cfg, [(kind, nbytes)], f"this {kind}")
    if plan.topology.npus < 2:
        raise ConfigError(f"network '{plan.config.name}' has {plan.topology.npus} NPU: a collective needs at least 2")
    return _attempts(lambda symmetric, plan: _collective(plan, system_cfg, kind, nbytes, seed, verify, monitor,
                                                         started, symmetric), plan, monitor)


def _collective(plan: NetworkPlan, system_cfg: SystemConfig, kind: str, nbytes: int, seed: int,
                verify: bool, monitor: RunMonitor, started: float, symmetric: bool) -> RunResult:
    """run_collective's simulation (`symmetric`: see _attempts)."""
    from system import build_systems

    topology = plan.topology
    network = plan.create_network(seed=seed)
    systems = build_systems(network, system_cfg, symmetric)
    for line in budget(network, systems[0], [(kind, nbytes)], 1).check(f"this {kind}"):
        monitor.note(line)
    for line in store_and_forward_caveat(network, system_cfg, kind):
        monitor.note(line)
    functional = None
    if verify:
        from system.functional import MAX_ELEMENTS, Functional

        if nbytes * topology.npus * (2 if kind in ("all-gather", "gather") else 1) > MAX_ELEMENTS:
            raise ConfigError(f"--verify carries one element per byte on every NPU: {nbytes} B on {topology.npus} "
                              f"NPUs is too large; verify at most {MAX_ELEMENTS // topology.npus} B")
        functional = Functional(systems, seed)
    events = [system.collective(kind, nbytes) for system in systems]
    monitor.tracker = collective_tracker(systems, events)
    partial = _simulate(network, monitor)
    if not partial:
        _check_finished(network, [i for i, event in enumerate(events) if not event.processed])
        if functional is not None:
            functional.verify()
    wall = time.perf_counter() - started
    records = [system.records[0] for system in systems]
    finished = [event.value.finished_at for event in events if event.processed]
    duration = max(finished) if len(finished) == len(events) else None  # None: interrupted before the end
    tables = {**_network_tables(network, monitor), "detailed": collective_phases(records)}
    n = topology.npus
    data_bytes = nbytes * n if kind in ("all-gather", "gather") else 0 if kind == "barrier" else nbytes
    algbw = None if duration is None else data_bytes / duration if duration > 0 else float("inf")
    summary = {
        "name": f"{kind}-{nbytes}B-{plan.config.name}",
        "collective": kind,
        "size_bytes": nbytes,
        "npus": n,
        "npus_finished": len(finished),
        "collective_time_ns": duration,
        "algbw_GBps": algbw,
        "busbw_GBps": None if algbw is None else algbw * BUS_FACTOR[kind](n),
        "bytes_sent_total": sum(network.bytes_sent),
        "verified": verify and not partial,
        **network_summary(network, plan, systems[0].config, wall, seed, partial, tables, monitor.notes),
    }
    return RunResult(summary["name"], summary, tables)


COLLECTIVE_PHASE_COLUMNS = {
    "npu": "the NPU whose view the row is (every NPU of the collective has its rows)",
    "chunk": "chunk index (the collective is split into preferred-dataset-splits chunks)",
    "phase": "phase of the chunk, from 1 (e.g. reduce-scatter on dim 0, then all-reduce on dim 1, ...)",
    "dim": "topology dimension of the phase; empty for a flat phase over the whole communicator",
    "op": "what the phase does (reduce-scatter, all-gather, all-reduce, all-to-all, broadcast, ...)",
    "algorithm": "the algorithm that ran it (ring, direct, ...)",
    "bytes": "data the phase starts with on this NPU",
    "queued_at_ns": "when the phase joined its dimension's queue",
    "queueing_delay_ns": "time queued before every member of its group was there and a slot was free",
    "network_delay_ns": "time from its start until this NPU's part ended (its last receive, plus endpoint "
                        "delays); a rooted collective's root may finish long before the others",
    "finished_at_ns": "when this NPU's part of the phase ended (empty: not finished, an interrupted run)",
}


def collective_phases(records: list) -> pd.DataFrame:
    """detailed.csv of `netsim collective`: every NPU's chunks and phases (COLLECTIVE_PHASE_COLUMNS);
    phases not started or not finished when a run was interrupted have empty times."""
    import pandas as pd

    rows = [{"npu": record.npu, "chunk": c, "phase": i + 1, "dim": p.dim, "op": p.op, "algorithm": p.algorithm,
             "bytes": p.nbytes, "queued_at_ns": p.queued_at, "queueing_delay_ns": p.queueing_delay_ns,
             "network_delay_ns": p.network_delay_ns, "finished_at_ns": p.finished_at}
            for record in records for c, chunk in enumerate(record.chunks) for i, p in enumerate(chunk)]
    return pd.DataFrame(rows, columns=list(COLLECTIVE_PHASE_COLUMNS)).astype({"dim": "Int64", "finished_at_ns": float})
