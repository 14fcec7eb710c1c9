"""Byte-compile netsim, system and workload where this Python imports them from, as `pip install .`
does: an editable install under PYTHONDONTWRITEBYTECODE (set on some machines) compiles them on every
start, ~0.1 s of each whole-process time a user does not pay. The whole-process benchmarks call it
before timing (bench_network's booksim scenario, bench_scale)."""

from __future__ import annotations

import compileall
import importlib.util
from pathlib import Path


def byte_compile_project() -> None:
    for package in ("netsim", "system", "workload"):
        compileall.compile_dir(Path(importlib.util.find_spec(package).origin).parent, quiet=1)
