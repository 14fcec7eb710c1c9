"""Wire workload -> system -> network for one run. With cli.py, the only module that imports all three layers.

Each entry point returns a `RunResult`: the `summary` dict (summary.json) and named tables
(each written as NAME.csv). `write_outputs` writes them into one output folder.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from netsim import report
from netsim.backends import create_network
from netsim.errors import ConfigError, DeadlockError
from netsim.network_config import NetworkConfig
from system import SystemConfig, build_systems
from workload import NpuRun, Workload, loop_for
from workload.report import detailed_frame, end_to_end_frame, overlap, totals


@dataclass
class RunResult:
    """What a run produced: summary.json's content and the tables written as CSV."""

    name: str
    summary: dict
    tables: dict = field(default_factory=dict)


def _network_summary(network, network_cfg: NetworkConfig, system_cfg: SystemConfig | None, wall: float,
                     seed: int) -> dict:
    summary = {
        "backend": network.backend_name,
        "wall_time_s": wall,
        "events": network.events,
        "simulated_time_ns": network.env.now,
        "partial": False,
        "seed": seed,
        "network": {"name": network_cfg.name, "path": network_cfg.path, "topology": network.topology.summary(),
                    "config": network_cfg.table},
    }
    if system_cfg is not None:
        summary["system"] = system_cfg.as_table()
    return summary


def _check_finished(network, unfinished: list[int]) -> None:
    """A run whose loops did not all finish cannot progress: say who waits on whom."""
    if not unfinished:
        return
    waiting = network.waiting()
    detail = "; ".join(waiting[:4]) + (f"; ... ({len(waiting)} waits in all)" if len(waiting) > 4 else "")
    raise DeadlockError(f"simulation stopped at {network.env.now:.1f} ns with NPUs {unfinished[:8]} unfinished"
                        f"{': ' + detail if detail else ''}")


def run_training(network_cfg: NetworkConfig, system_cfg: SystemConfig, workload: Workload, passes: int = 1,
                 seed: int = 0) -> RunResult:
    """Simulate `passes` training iterations of `workload` on every NPU."""
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
    network.run()
    _check_finished(network, [run.npu for run in runs if run.finished_at is None])
    wall = time.perf_counter() - started

    finish_times = [run.finished_at for run in runs]
    slowest = max(range(len(runs)), key=lambda i: finish_times[i])
    per_npu = [totals(run) for run in runs]
    first = per_npu[0]
    end_to_end = max(finish_times)
    summary = {
        "name": f"{workload.name}-{network_cfg.name}",
        "end_to_end_time_ns": end_to_end,
        "compute_time_ns": first["compute_time_ns"],
        "exposed_comm_time_ns": first["exposed_comm_time_ns"],
        **overlap(runs[0]),
        "passes": passes,
        "npu_finish_time_ns": finish_times,
        "npu_compute_time_ns": [t["compute_time_ns"] for t in per_npu],
        "npu_exposed_comm_time_ns": [t["exposed_comm_time_ns"] for t in per_npu],
        "slowest_npu": slowest,
        **_network_summary(network, network_cfg, system_cfg, wall, seed),
        "workload": {"name": workload.name, "path": workload.path, "loop": workload.parallelism,
                     "layers": len(workload.layers)},
    }
    if workload.parallelism.startswith("PIPELINE_") and first["compute_time_ns"] > 0:
        # idle time over compute of the first stage (NPU 0): the bubble fraction of the schedule
        summary["pipeline_bubble_fraction"] = (finish_times[0] - first["compute_time_ns"]) / first["compute_time_ns"]
    tables = {"end_to_end": end_to_end_frame(runs[0]), "detailed": detailed_frame(runs[0]),
              "links": network.link_stats(), "npus": network.npu_stats()}
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


def run_collective(network_cfg: NetworkConfig, system_cfg: SystemConfig, kind: str, nbytes: int,
                   seed: int = 0, verify: bool = False) -> RunResult:
    """Every NPU issues one `kind` collective of `nbytes` at time 0; report its time and bandwidths.

    With `verify`, the collective carries real payloads and every NPU's result is checked
    (system.functional); a wrong result raises VerificationError.
    """
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
    network.run()
    _check_finished(network, [i for i, event in enumerate(events) if not event.processed])
    if functional is not None:
        functional.verify()
    wall = time.perf_counter() - started
    duration = max(event.value.finished_at for event in events)
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
        "verified": verify,
        **_network_summary(network, network_cfg, system_cfg, wall, seed),
    }
    record = events[0].value
    phases = pd.DataFrame([
        {"chunk": c, "phase": i + 1, "dim": p.dim, "op": p.op, "algorithm": p.algorithm, "bytes": p.nbytes,
         "queueing_delay_ns": p.queueing_delay_ns, "network_delay_ns": p.network_delay_ns}
        for c, chunk in enumerate(record.chunks) for i, p in enumerate(chunk)])
    tables = {"detailed": phases, "links": network.link_stats(), "npus": network.npu_stats()}
    return RunResult(summary["name"], summary, tables)


def write_outputs(result: RunResult, out_dir: Path) -> Path:
    """Write summary.json and every table as CSV into `out_dir` (created if needed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(result.summary, indent=2, default=report.json_default) + "\n")
    for name, frame in result.tables.items():
        frame.to_csv(out_dir / f"{name}.csv", index=False)
    return out_dir
