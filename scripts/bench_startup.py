"""Start-up of the `netsim` command on a small network: the wall time from the moment the process
is started to its first simulated event (simpy's first step: the first cycle of the packet
backend's clock, or the first event of an analytical run), and to its end, for `synth` and
`collective` as a user types them (medians of `--repeats` fresh processes, run in turn), with the
CPU time the process had used by then (less sensitive to a busy machine than the wall time).
Prints figures only; the target is under 0.3 s to the first simulated event.

Each process starts as the console script does (netsim.__main__.main) with one addition made
first: simpy's Environment.step is wrapped to note the time of its first call (simpy is imported
by every run anyway). Times are of the machine's monotonic clock, which parent and child share.
Also printed: a bare `python -c pass`, the interpreter's own floor, and which of pandas,
networkx, rich and matplotlib a run had imported by its first simulated event.

    python scripts/bench_startup.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from byte_compile import byte_compile_project  # (scripts/, beside this one)

COMMANDS = {
    "synth": ["synth", "--network", "torus-4x4", "--pattern", "uniform", "--rate", "0.1", "--cycles", "1000"],
    "collective": ["collective", "all-reduce", "--size", "1KiB", "--network", "ring-8"],
    "collective (packet)": ["collective", "all-reduce", "--size", "1KiB", "--network", "ring-8", "--backend", "garnet"],
}
WATCHED = ("pandas", "networkx", "rich", "matplotlib")
MARK = "bench-startup-first-event"

CHILD = """
import sys, time
import simpy.core
step = simpy.core.Environment.step
seen = []
def first_step(self):
    if not seen:
        seen.append(time.monotonic())
        loaded = ",".join(name for name in {watched!r} if name in sys.modules) or "-"
        print("{mark}", seen[0], time.process_time(), loaded, file=sys.stderr, flush=True)
    return step(self)
simpy.core.Environment.step = first_step
from netsim.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str]) -> dict:
    """Wall and CPU seconds of one process to its end (`wall`, `cpu`) and to its first simulated
    event (`first_wall`, `first_cpu`; absent in a process without one), and the WATCHED modules it
    had imported by then (`loaded`)."""
    cpu, started = children_cpu(), time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True)
    figures = {"wall": time.monotonic() - started, "cpu": children_cpu() - cpu, "loaded": ""}
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[3:])}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    for line in done.stderr.splitlines():
        if line.startswith(MARK):
            _, at, first_cpu, figures["loaded"] = line.split()
            figures.update(first_wall=float(at) - started, first_cpu=float(first_cpu))
    return figures


def median(rows: list[dict], key: str) -> str:
    values = [row[key] for row in rows if key in row]
    return f"{statistics.median(values):.3f}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per command (default 5)")
    args = parser.parse_args()
    byte_compile_project()  # as `pip install .` leaves it (scripts/byte_compile.py)
    child = CHILD.format(watched=WATCHED, mark=MARK)
    with tempfile.TemporaryDirectory() as folder:
        runs = {"python -c pass": [sys.executable, "-c", "pass"]}
        for name, argv in COMMANDS.items():
            for quiet in (True, False):
                runs[f"{name}{' --quiet' if quiet else ''}"] = [
                    sys.executable, "-c", child, *argv, "--out", str(Path(folder) / "out"),
                    *(["--quiet"] if quiet else [])]
        figures: dict[str, list] = {name: [] for name in runs}
        for _ in range(args.repeats):  # in turn: a machine's load drifts alike for all
            for name, argv in runs.items():
                figures[name].append(timed(argv))
    print(f"seconds from process start, medians of {args.repeats} processes (load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the end)")
    print(f"{'command':<30} {'first event':>11} {'(CPU)':>7} {'total':>7} {'(CPU)':>7}  imported by the first event")
    for name, rows in figures.items():
        print(f"{name:<30} {median(rows, 'first_wall'):>11} {median(rows, 'first_cpu'):>7} {median(rows, 'wall'):>7} "
              f"{median(rows, 'cpu'):>7}  {rows[-1]['loaded']}")


if __name__ == "__main__":
    main()
