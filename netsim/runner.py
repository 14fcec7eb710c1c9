"""Wire workload -> system -> network for one run. With cli.py, the only module that imports all three layers.

Each entry point returns a `RunResult`: the `summary` dict (summary.json) and named tables
(each written as NAME.csv). `write_outputs` writes them into one output folder.

A run takes an optional `RunMonitor` (netsim.progress): it shows progress, samples link counters
(link_timeseries.csv) and stops the run on Ctrl-C; a stopped run still returns its result, with
`partial: true` and everything measured up to the moment it stopped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from netsim import report
from netsim.backends import create_network
from netsim.errors import ConfigError, DeadlockError
from netsim.network_config import NetworkConfig
from netsim.progress import NullView, RunMonitor
from system import SystemConfig, build_systems
from workload import NpuRun, Workload, loop_for
from workload.chakra import ComputeModel, MemoryConfig, RemoteMemory, check_memory, load_trace, start_trace
from workload.chakra.report import nodes_frame, npu_totals
from workload.report import detailed_frame, end_to_end_frame, overlap, totals


@dataclass
class RunResult:
    """What a run produced: summary.json's content and the tables written as CSV."""

    name: str
    summary: dict
    tables: dict = field(default_factory=dict)


def _network_summary(network, network_cfg: NetworkConfig, system_cfg: SystemConfig | None, wall: float,
                     seed: int, partial: bool) -> dict:
    summary = {
        "backend": network.backend_name,
        "wall_time_s": wall,
        "events": network.events_so_far(),
        "simulated_time_ns": network.env.now,
        "partial": partial,
        "seed": seed,
        "warnings": list(network.warnings),
        "network": {"name": network_cfg.name, "path": network_cfg.path, "topology": network.topology.summary(),
                    "config": network_cfg.table},
    }
    if system_cfg is not None:
        summary["system"] = system_cfg.as_table()
    return summary


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


def training_tracker(runs: list, workload: Workload, passes: int):
    """Progress of a training run: NPU 0's compute done over its expected compute, as passes and layers."""
    per_pass = sum(layer.fwd_compute + layer.ig_compute + layer.wg_compute for layer in workload.layers) or 1
    n_layers = len(workload.layers)

    def track(network) -> tuple[float, str]:
        if all(run.finished_at is not None for run in runs):
            return 1.0, f"pass {passes}/{passes}, done"
        done = sum(sum(stats.compute.values()) for stats in runs[0].layers) / (per_pass * passes)
        done = min(done, 0.999)
        pass_index = min(passes, int(done * passes) + 1)
        layer = min(n_layers, int((done * passes) % 1 * n_layers) + 1)
        return done, f"pass {pass_index}/{passes}, layer ~{layer}/{n_layers} (NPU 0)"

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


def run_training(network_cfg: NetworkConfig, system_cfg: SystemConfig, workload: Workload, passes: int = 1,
                 seed: int = 0, monitor: RunMonitor | None = None) -> RunResult:
    """Simulate `passes` training iterations of `workload` on every NPU."""
    monitor = monitor or RunMonitor()
    loop = loop_for(workload)
    started = time.perf_counter()
    topology = network_cfg.build_topology()
    network = create_network(network_cfg.backend, topology, config=network_cfg, seed=seed)
    systems = build_systems(network, system_cfg)
    runs = [NpuRun(network.env, system, workload, passes) for system in systems]

    def mark_finished(run: NpuRun):
        return lambda _event: setattr(run, "finished_at", network.env.now)

    for run in runs:
        network.env.process(loop(run)).callbacks.append(mark_finished(run))
    monitor.tracker = training_tracker(runs, workload, passes)
    partial = _simulate(network, monitor)
    if not partial:
        _check_finished(network, [run.npu for run in runs if run.finished_at is None])
    wall = time.perf_counter() - started

    finish_times = [run.finished_at for run in runs]  # None: not finished (partial run)
    per_npu = [totals(run) for run in runs]
    first = per_npu[0]
    summary = {
        "name": f"{workload.name}-{network_cfg.name}",
        **_timing_summary(network, finish_times, per_npu, {**overlap(runs[0]), "passes": passes}),
        **_network_summary(network, network_cfg, system_cfg, wall, seed, partial),
        "workload": {"name": workload.name, "path": workload.path, "loop": workload.parallelism,
                     "layers": len(workload.layers)},
    }
    if workload.parallelism.startswith("PIPELINE_") and first["compute_time_ns"] > 0 and not partial:
        # idle time over compute of the first stage (NPU 0): the bubble fraction of the schedule
        summary["pipeline_bubble_fraction"] = (finish_times[0] - first["compute_time_ns"]) / first["compute_time_ns"]
    tables = {"end_to_end": end_to_end_frame(runs[0]), "detailed": detailed_frame(runs[0]),
              **_network_tables(network, monitor)}
    return RunResult(summary["name"], summary, tables)


def trace_tracker(runs: list, trace):
    """Progress of a trace run: nodes finished over all nodes of all NPUs."""
    total = trace.node_count() or 1

    def track(network) -> tuple[float, str]:
        done = sum(len(run.finished) for run in runs)
        return done / total, f"{done:,} of {total:,} nodes done"

    return track


def run_trace(network_cfg: NetworkConfig, system_cfg: SystemConfig, spec: str | Path, comm_groups: dict | None = None,
              memory: MemoryConfig | None = None, in_flight: int = 0, seed: int = 0,
              monitor: RunMonitor | None = None) -> RunResult:
    """Execute the Chakra trace `spec` (a folder or `PREFIX` of `PREFIX.<rank>.et` files) on every NPU.

    `comm_groups`: communicator groups by number (`pg_name`); `memory`: the remote memory for MEM nodes;
    `in_flight`: nodes each NPU runs at once per engine (0 = no limit; ASTRA-sim 2.x: 1).
    """
    monitor = monitor or RunMonitor()
    started = time.perf_counter()
    topology = network_cfg.build_topology()
    trace = load_trace(spec, topology, comm_groups)
    check_memory(trace, memory)
    network = create_network(network_cfg.backend, topology, config=network_cfg, seed=seed)
    systems = build_systems(network, system_cfg)
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
    summary = {
        "name": f"{trace.name}-{network_cfg.name}",
        **_timing_summary(network, [run.finished_at for run in runs], per_npu, overlap0),
        **_network_summary(network, network_cfg, system_cfg, wall, seed, partial),
        "workload": {"name": trace.name, "path": str(trace.prefix), "format": "chakra", "nodes": trace.node_count(),
                     "in_flight": in_flight, "memory": memory.path if memory is not None else None},
    }
    tables = {"nodes": nodes_frame(runs), **_network_tables(network, monitor)}
    return RunResult(summary["name"], summary, tables)


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


def collective_tracker(expected_bytes: int | None):
    """Progress of a collective: bytes delivered over the bytes it will send (from the analytical
    model, which sends the same messages), or over the bytes sent so far when that is unknown."""

    def track(network) -> tuple[float, str]:
        delivered = sum(network.bytes_received)
        total = expected_bytes or sum(network.bytes_sent) or 1
        return delivered / total, f"{delivered:,} of {total:,} bytes delivered"

    return track


def run_collective(network_cfg: NetworkConfig, system_cfg: SystemConfig, kind: str, nbytes: int,
                   seed: int = 0, verify: bool = False, monitor: RunMonitor | None = None) -> RunResult:
    """Every NPU issues one `kind` collective of `nbytes` at time 0; report its time and bandwidths.

    With `verify`, the collective carries real payloads and every NPU's result is checked
    (system.functional); a wrong result raises VerificationError.
    """
    expected_bytes = None
    if monitor is not None and not isinstance(monitor.view, NullView) and network_cfg.backend != "analytical":
        analytical = replace(network_cfg, backend="analytical")
        expected_bytes = run_collective(analytical, system_cfg, kind, nbytes, seed).summary["bytes_sent_total"]
    monitor = monitor or RunMonitor()
    monitor.tracker = collective_tracker(expected_bytes)
    started = time.perf_counter()
    topology = network_cfg.build_topology()
    network = create_network(network_cfg.backend, topology, config=network_cfg, seed=seed)
    systems = build_systems(network, system_cfg)
    functional = None
    if verify:
        from system.functional import MAX_ELEMENTS, Functional

        if nbytes * topology.npus * (2 if kind in ("all-gather", "gather") else 1) > MAX_ELEMENTS:
            raise ConfigError(f"--verify carries one element per byte on every NPU: {nbytes} B on {topology.npus} "
                              f"NPUs is too large; verify at most {MAX_ELEMENTS // topology.npus} B")
        functional = Functional(systems, seed)
    events = [system.collective(kind, nbytes) for system in systems]
    partial = _simulate(network, monitor)
    if not partial:
        _check_finished(network, [i for i, event in enumerate(events) if not event.processed])
        if functional is not None:
            functional.verify()
    wall = time.perf_counter() - started
    duration = network.env.now if partial else max(event.value.finished_at for event in events)
    n = topology.npus
    data_bytes = nbytes * n if kind in ("all-gather", "gather") else 0 if kind == "barrier" else nbytes
    algbw = data_bytes / duration if duration > 0 else float("inf")
    summary = {
        "name": f"{kind}-{nbytes}B-{network_cfg.name}",
        "collective": kind,
        "size_bytes": nbytes,
        "npus": n,
        "collective_time_ns": duration,
        "algbw_GBps": algbw,
        "busbw_GBps": algbw * BUS_FACTOR[kind](n),
        "bytes_sent_total": sum(network.bytes_sent),
        "verified": verify and not partial,
        **_network_summary(network, network_cfg, system_cfg, wall, seed, partial),
    }
    tables = _network_tables(network, monitor)
    if events[0].processed:
        record = events[0].value
        tables["detailed"] = pd.DataFrame([
            {"chunk": c, "phase": i + 1, "dim": p.dim, "op": p.op, "algorithm": p.algorithm, "bytes": p.nbytes,
             "queueing_delay_ns": p.queueing_delay_ns, "network_delay_ns": p.network_delay_ns}
            for c, chunk in enumerate(record.chunks) for i, p in enumerate(chunk)])
    return RunResult(summary["name"], summary, tables)


def write_outputs(result: RunResult, out_dir: Path) -> Path:
    """Write summary.json and every table as CSV into `out_dir` (created if needed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(report.to_json(result.summary) + "\n")
    for name, frame in result.tables.items():
        frame.to_csv(out_dir / f"{name}.csv", index=False)
    return out_dir
