"""ASTRA-sim's end-to-end reports from the training loops' measurements (units in every header)."""

from __future__ import annotations

import pandas as pd

from workload.loops import PASSES, NpuRun


END_TO_END_COLUMNS = {
    "layer": "layer name, in forward order",
    "{pass}_compute_ns": "compute of the pass (fwd, ig = input gradient, wg = weight gradient), all passes summed",
    "{pass}_exposed_comm_ns": "time the loop sat blocked on the pass's collective while it ran; never more "
                              "than {pass}_total_comm_ns",
    "{pass}_total_comm_ns": "the pass's collectives from issue to end, summed (overlapped with compute or not)",
    "{pass}_exposed_update_ns": "time blocked after the collective ended, on the weight update that follows it "
                                "(the workload's update time); ASTRA-sim counts it as exposed communication, and "
                                "so does summary.json's exposed_comm_time_ns",
}


def end_to_end_frame(run: NpuRun) -> pd.DataFrame:
    """Per layer (NPU 0's view, as ASTRA-sim's EndToEnd.csv): compute, exposed and total communication
    per pass, and the time blocked on weight updates (END_TO_END_COLUMNS)."""
    rows = []
    for layer, stats in zip(run.workload.layers, run.layers):
        row = {"layer": layer.name}
        for phase in PASSES:
            row[f"{phase}_compute_ns"] = stats.compute[phase]
        for phase in PASSES:
            row[f"{phase}_exposed_comm_ns"] = stats.exposed[phase]
        for phase in PASSES:
            row[f"{phase}_total_comm_ns"] = stats.total_comm[phase]
        for phase in PASSES:
            row[f"{phase}_exposed_update_ns"] = stats.exposed_update[phase]
        rows.append(row)
    return pd.DataFrame(rows)


def detailed_frame(run: NpuRun) -> pd.DataFrame:
    """Per layer, pass and collective phase: mean chunk queueing delay and network delay (ASTRA-sim's detailed.csv)."""
    rows = []
    for layer, stats in zip(run.workload.layers, run.layers):
        for phase in PASSES:
            records = stats.collectives[phase]
            if not records:
                continue
            per_phase: dict[int, list] = {}
            for record in records:
                for index, (queueing, network) in enumerate(record.phase_delays()):
                    per_phase.setdefault(index, []).append((queueing, network))
            first = records[0].chunks[0] if records[0].chunks else []
            for index, delays in sorted(per_phase.items()):
                rows.append({
                    "layer": layer.name, "pass": phase, "collective": records[0].kind,
                    "phase": index + 1,
                    "dim": first[index].dim if index < len(first) else -1,
                    "op": first[index].op if index < len(first) else "",
                    "queueing_delay_ns": sum(q for q, _ in delays) / len(delays),
                    "network_delay_ns": sum(n for _, n in delays) / len(delays),
                })
    columns = ["layer", "pass", "collective", "phase", "dim", "op", "queueing_delay_ns", "network_delay_ns"]
    return pd.DataFrame(rows, columns=columns)


def totals(run: NpuRun) -> dict:
    """One NPU's totals: compute, exposed communication and finish time (ns)."""
    compute = sum(sum(stats.compute.values()) for stats in run.layers)
    update = sum(sum(stats.exposed_update.values()) for stats in run.layers)
    exposed = sum(sum(stats.exposed.values()) for stats in run.layers) + update
    return {"compute_time_ns": compute, "exposed_comm_time_ns": exposed, "exposed_update_time_ns": update,
            "finish_time_ns": run.finished_at}


def union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of time intervals as sorted, disjoint intervals."""
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def length(intervals) -> float:
    """Total length of disjoint intervals."""
    return sum(b - a for a, b in intervals)


def overlap_of(compute_intervals: list, comm_intervals: list) -> dict:
    """Compute/communication overlap of one NPU (ns): time some communication of it was in flight
    (`comm_busy_time_ns`), and how much of that time it was computing (`compute_comm_overlap_ns`)."""
    compute, comm = union(compute_intervals), union(comm_intervals)
    both, i, j = 0.0, 0, 0
    while i < len(compute) and j < len(comm):
        both += max(0.0, min(compute[i][1], comm[j][1]) - max(compute[i][0], comm[j][0]))
        if compute[i][1] < comm[j][1]:
            i += 1
        else:
            j += 1
    busy = length(comm)
    return {"comm_busy_time_ns": busy, "compute_comm_overlap_ns": both,
            "overlap_fraction": both / busy if busy > 0 else 0.0}


def overlap(run: NpuRun) -> dict:
    """`overlap_of` a training loop's NPU: its compute intervals and its collectives' intervals."""
    return overlap_of(run.compute_intervals, run.comm_intervals)
