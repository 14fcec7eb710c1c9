"""Workload layer: training loops over layer lists, workload file parsers, end-to-end reports.

Imports the system layer and the network layer's helpers; nothing imports it but the runner.
"""

from __future__ import annotations

from pathlib import Path

from netsim.bundled import find_config
from workload.legacy_parser import parse_legacy_workload
from workload.loops import LOOPS, NpuRun, loop_for, register_loop
from workload.model import Comm, Layer, Workload

WORKLOAD_SUFFIXES = (".txt",)


def load_workload(name_or_path: str | Path) -> Workload:
    """A bundled workload by name (`Resnet50_DataParallel`) or a legacy ASTRA-sim workload file."""
    path = find_config("workload", name_or_path, "workload.data", WORKLOAD_SUFFIXES)
    return parse_legacy_workload(path)


__all__ = ["Comm", "Layer", "LOOPS", "NpuRun", "Workload", "load_workload", "loop_for", "register_loop"]
