"""What a trace run reports: per-node timings (nodes.csv) and per-NPU totals, as ASTRA-sim 2.x counts them.

Per NPU: compute time is the time some compute node (not a host op) ran; exposed communication is
the rest of the NPU's run, finish time minus compute time (ASTRA-sim's "exposed communication").
Per communication node (collective, send, receive, memory access): the part of its run during
which its NPU computed nothing. Nodes in flight at the same time may share such time, so their
sum can exceed the NPU's exposed communication.
"""

from __future__ import annotations

import bisect

import pandas as pd

from workload.chakra.execute import COMMUNICATION, NpuExecution
from workload.report import length, overlap_of, union

NODE_COLUMNS = ("npu", "node_id", "name", "type", "collective", "bytes", "start_ns", "end_ns", "duration_ns",
                "exposed_comm_ns")


def _intervals(run: NpuExecution, kinds) -> list[tuple[float, float]]:
    return [(run.started[i], run.finished[i]) for i in run.finished if kinds(run.nodes[i])]


def compute_intervals(run: NpuExecution) -> list[tuple[float, float]]:
    return _intervals(run, lambda node: node.kind == "COMP" and not node.is_cpu_op)


def comm_intervals(run: NpuExecution) -> list[tuple[float, float]]:
    return _intervals(run, lambda node: node.kind in COMMUNICATION)


def _uncovered(busy: list[tuple[float, float]], starts: list[float], start: float, end: float) -> float:
    """Length of [start, end] outside the disjoint sorted intervals `busy` (`starts`: their starts)."""
    covered = 0.0
    index = max(0, bisect.bisect_right(starts, start) - 1)
    while index < len(busy) and busy[index][0] < end:
        covered += max(0.0, min(end, busy[index][1]) - max(start, busy[index][0]))
        index += 1
    return (end - start) - covered


def nodes_frame(runs: list[NpuExecution]) -> pd.DataFrame:
    """One row per node that started, NPU by NPU in node order (end and exposure empty if unfinished)."""
    rows = []
    for run in runs:
        busy = union(compute_intervals(run))
        starts = [a for a, _ in busy]
        for node in run.trace.nodes:
            if node.id not in run.started:
                continue
            start, end = run.started[node.id], run.finished.get(node.id)
            exposed = None
            if end is not None:
                exposed = _uncovered(busy, starts, start, end) if node.kind in COMMUNICATION else 0.0
            nbytes = node.tensor_size if node.kind in ("MEM_LOAD", "MEM_STORE") else node.nbytes
            rows.append((run.npu, node.id, node.name, node.kind, node.collective or "", nbytes, start, end,
                         None if end is None else end - start, exposed))
    return pd.DataFrame(rows, columns=list(NODE_COLUMNS))


def npu_totals(run: NpuExecution, now: float) -> dict:
    """One NPU's totals (ns): compute, exposed communication (to its finish, or to `now` if unfinished)."""
    compute = float(length(union(compute_intervals(run))))
    end = run.finished_at if run.finished_at is not None else now
    return {"compute_time_ns": compute, "exposed_comm_time_ns": end - compute, "finish_time_ns": run.finished_at,
            **overlap_of(compute_intervals(run), comm_intervals(run))}
