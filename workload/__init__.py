"""Workload layer: training loops over layer lists, workload file parsers, end-to-end reports.

Imports the system layer and the network layer's helpers; nothing imports it but the runner.
"""

from __future__ import annotations

from pathlib import Path

from netsim.bundled import find_config
from netsim.config import did_you_mean
from netsim.errors import ConfigError
from netsim.units import UnitError
from workload.legacy_parser import parse_legacy_workload
from workload.loops import LOOPS, NpuRun, loop_for, register_loop
from workload.model import Comm, Layer, Workload
from workload.toml_form import KNOWN_OPTIONS, option_name, option_value, parse_toml_workload
from workload.loops import reordered  # noqa: E402,F401  (a loop registered by name, as docs/system-and-workloads.md shows)

WORKLOAD_SUFFIXES = (".txt", ".toml")


def load_workload(name_or_path: str | Path) -> Workload:
    """A bundled workload by name (`Resnet50_DataParallel`), a legacy ASTRA-sim file or a TOML workload."""
    path = find_config("workload", name_or_path, "workload.data", WORKLOAD_SUFFIXES)
    return parse_toml_workload(path) if path.suffix == ".toml" else parse_legacy_workload(path)


def with_overrides(workload: Workload, items: list[tuple[str, object]]) -> Workload:
    """Apply `--set workload.KEY=VALUE` options (e.g. bucket-size=25MiB, micro-batches=8)."""
    options = {}
    for key, value in items:
        name = option_name(key)
        if name not in KNOWN_OPTIONS:
            spelled = sorted(k.replace("_", "-").lower() for k in KNOWN_OPTIONS)
            raise ConfigError(f"--set workload.{key}: unknown workload option"
                              f"{did_you_mean(key, spelled)} (known: {', '.join(spelled)})")
        try:
            options[name] = option_value(name, value)
        except (UnitError, ValueError) as exc:
            raise ConfigError(f"--set workload.{key}: {exc}") from None
    return workload.with_options(**options)


__all__ = ["Comm", "Layer", "LOOPS", "NpuRun", "Workload", "load_workload", "loop_for", "register_loop",
           "with_overrides"]
