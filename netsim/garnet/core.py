"""Which packet core runs: the compiled one (Cython, built by `pip install` from these same .py files
with the types in the .pxd files beside them) or the pure-Python source, the reference. Both give the
same results bit for bit; the compiled one is several times faster.

The source runs instead of the compiled modules when NETSIM_PURE_CORE=1, when they were not built
(no C compiler or Python headers at install), or when any of them is older than its source (a
checkout edited after `pip install -e .` or `setup.py build_ext --inplace`): the modules cimport
each other's types, so it is all or none. `install()` (called by netsim/garnet/__init__.py, before any core module is imported) decides
with a few file look-ups and no import."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
SOURCE_TREE = (PACKAGE.parents[1] / "setup.py").exists()  # a checkout (editable install), not an installed copy
# The compiled modules (setup.py reads this list): the packet backend's per-cycle and per-flit path.
CORE = ("cycle_queue", "departures", "clock", "packet", "crossbar", "input_unit", "output_unit", "router", "nic", "allocators.base",
        "allocators.garnet", "allocators.booksim", "packet_stats", "routes", "sender", "traffic_source", "shortcuts.partitions")
FORCE_PURE = "NETSIM_PURE_CORE"

build = "pure"  # "compiled" or "pure", once install() has run
reason = ""  # why the pure core runs ("" when compiled)
_noticed = False


def _files(module: str) -> tuple[Path, list[Path]]:
    """(the source .py, the compiled files for this interpreter) of core module `module`."""
    source = PACKAGE.joinpath(*module.split(".")).with_suffix(".py")
    stem = source.with_suffix("")
    return source, [Path(f"{stem}{suffix}") for suffix in importlib.machinery.EXTENSION_SUFFIXES
                    if Path(f"{stem}{suffix}").exists()]


def _why_pure() -> str:
    """Why the compiled core cannot run ('' if it can)."""
    if os.environ.get(FORCE_PURE) == "1":
        return f"{FORCE_PURE}=1"
    for module in CORE:
        source, compiled = _files(module)
        if not compiled:
            return "not compiled (no C compiler or Python headers when netsim was installed)"
        if not SOURCE_TREE:  # (an installed copy's files all date from its install)
            continue
        built = compiled[0].stat().st_mtime
        for typed in (source, source.with_suffix(".pxd")):
            if typed.exists() and typed.stat().st_mtime > built:
                return f"{typed.name} is newer than its compiled module (rebuild: pip install -e .)"
    return ""


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the core modules' .py source, where the compiled modules would be found first."""

    names = {f"netsim.garnet.{module}" for module in CORE}

    def find_spec(self, name, path, target=None):
        if name not in self.names:
            return None
        source, _ = _files(name.removeprefix("netsim.garnet."))
        return importlib.util.spec_from_file_location(name, source)


def install() -> None:
    """Decide which core runs; for the pure one, have the core modules load from their source."""
    global build, reason
    reason = _why_pure()
    build = "pure" if reason else "compiled"
    if reason and not any(isinstance(finder, _SourceFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder())


def describe() -> str:
    """The core in a few words (`netsim --version`)."""
    return "compiled (Cython)" if build == "compiled" else f"pure Python: {reason}"


def notice_once() -> None:
    """Say in one line (stderr, once per process) that the packet backend runs the slower pure core,
    unless the user asked for it."""
    global _noticed
    if build == "pure" and not _noticed and os.environ.get(FORCE_PURE) != "1":
        _noticed = True
        print(f"netsim: the packet backend runs its pure-Python core ({reason}): same results, several "
              "times slower", file=sys.stderr)
