"""Check the compiled core's declarations: Cython, run with --warning-extra on every core module
(netsim/garnet/core.py's CORE), names each @cython.locals entry of a .pxd file that the .py function
does not use (a misspelt or stale local, which Cython otherwise takes silently, leaving the real local
untyped). Prints each such warning and exits 1 if there is one; CI runs it.

    python scripts/check_cython.py          # needs Cython (the test extra)
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the compiler directives of setup.py that change which names a module's C code holds
DIRECTIVES = ("annotation_typing=False", "infer_types=True", "boundscheck=False", "wraparound=False",
              "initializedcheck=False")
UNUSED_DECLARATION = re.compile(r"^warning: (\S+\.pxd):(\d+):(\d+): Unused entry '([^']+)'")


def core_sources(root: Path = ROOT) -> list[Path]:
    """The source files of the core modules (core.py's CORE, read as setup.py reads it)."""
    for node in ast.parse((root / "netsim/garnet/core.py").read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "CORE":
            return [root / "netsim/garnet" / f"{module.replace('.', '/')}.py" for module in ast.literal_eval(node.value)]
    raise SystemExit("netsim/garnet/core.py has no CORE list")


def unused_declarations(source: Path, root: Path = ROOT) -> list[str]:
    """Cython's --warning-extra warnings on `source` that name an unused entry declared in a .pxd file."""
    options = [arg for directive in DIRECTIVES for arg in ("-X", directive)]
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run([sys.executable, "-m", "cython", "-3", "--warning-extra", *options, "-o",
                               str(Path(scratch) / "module.c"), str(source.relative_to(root))],
                              cwd=root, capture_output=True, text=True)
    found = [line for line in (done.stdout + done.stderr).splitlines() if UNUSED_DECLARATION.match(line)]
    if done.returncode != 0:
        found.append(f"{source.relative_to(root)}: Cython failed:\n{done.stderr.strip()}")
    return found


def main() -> int:
    problems = [line for source in core_sources() for line in unused_declarations(source)]
    for line in problems:
        print(line)
    print(f"{len(core_sources())} core modules: {len(problems)} unused or misspelt declarations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
