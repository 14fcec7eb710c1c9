"""Agreement with ASTRA-sim on its own input files, from the reference rows in tests/data.

Prints (1) for every ASTRA-sim 2.x collective row (tests/data/astra-sim-2x/collectives-*.csv: the
reference matrix at 1 MiB, 64 MiB and 1 GiB, then the extra cases), by backend, algorithm (the
extra cases: their system) and collective: rows within 1% and the worst error, netsim's `analytical`
backend against ASTRA-sim's congestion-unaware binary and `congestion-aware` against its
congestion-aware one; (2) every ASTRA-sim v1 legacy workload row (tests/data/astra-sim-v1):
netsim's end-to-end time against v1's. The tests check the same rows (the heaviest v1 rows only
here: they take seconds each).

    python scripts/astra_parity.py [--only 2x|v1] [--rows]     # --rows: every row, not only the tables
"""

from __future__ import annotations

import argparse
import csv
import warnings
from collections import defaultdict
from pathlib import Path

from netsim.errors import NetsimWarning
from netsim.network_config import load_network
from netsim.app.runner import run_collective, run_training
from system import load_system
from workload import load_workload

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
BACKENDS = {"congestion_unaware": "analytical", "congestion_aware": "congestion-aware"}


def rows(folder: Path, pattern: str):
    for path in sorted(folder.glob(pattern)):
        with path.open(newline="") as f:
            yield from ({**row, "file": path.name} for row in csv.DictReader(f))


def collectives(show_rows: bool) -> None:
    folder = DATA / "astra-sim-2x"
    errors = defaultdict(list)
    for row in rows(folder, "collectives-*.csv"):
        network = load_network(folder / row["network_file"], backend=BACKENDS[row["backend"]])
        kind = row["collective"].replace("_", "-")
        time = run_collective(network, load_system(folder / row["system_file"]), kind,
                              int(row["size_bytes_per_npu"])).summary["collective_time_ns"]
        error = time / float(row["time_ns_slowest_npu"]) - 1
        errors[(row["file"] == "collectives-extra.csv", row["backend"], row["algorithm"], kind)].append(error)
        if show_rows:
            print(f"{error:+7.2%}  {row['file']} {row['backend']} {row['system_variant']} {row['topology']} {kind} "
                  f"{row['algorithm']} {row['size_bytes_per_npu']}: netsim {time:.0f} ns, ASTRA-sim "
                  f"{row['time_ns_slowest_npu']} ns")
    for extra in (False, True):
        print("the extra cases" if extra else "the reference matrix (1 MiB, 64 MiB, 1 GiB)")
        print(f"{'ASTRA-sim 2.x backend':22} {'algorithm':20} {'collective':15} {'within 1%':>10} {'worst':>8}")
        for (is_extra, backend, algorithm, kind), errs in sorted(errors.items()):
            if is_extra == extra:
                within = sum(abs(e) <= 0.01 for e in errs)
                print(f"{backend:22} {algorithm:20} {kind:15} {within:>4}/{len(errs):<5} {max(errs, key=abs):+8.2%}")
    every = [e for errs in errors.values() for e in errs]
    print(f"all: {sum(abs(e) <= 0.01 for e in every)}/{len(every)} within 1%, worst {max(every, key=abs):+.2%}")


def workloads() -> None:
    folder = DATA / "astra-sim-v1"
    every = []
    print(f"{'workload':46} {'network':36} {'system':34} {'v1 ns':>14} {'netsim ns':>14} {'error':>8}")
    for row in rows(folder, "workloads-*.csv"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NetsimWarning)
            system = load_system(folder / row["system_file"])
        summary = run_training(load_network(folder / row["network_file"]), system,
                               load_workload(folder / row["workload_file"]), passes=int(row["passes"])).summary
        error = summary["end_to_end_time_ns"] / float(row["end_to_end_ns"]) - 1
        every.append(error)
        print(f"{Path(row['workload_file']).stem:46} {Path(row['network_file']).stem:36} "
              f"{Path(row['system_file']).stem:34} {row['end_to_end_ns']:>14} {summary['end_to_end_time_ns']:14.0f} "
              f"{error:+8.2%}")
    print(f"all: {sum(abs(e) <= 0.01 for e in every)}/{len(every)} within 1%, worst {max(every, key=abs):+.2%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("2x", "v1"))
    parser.add_argument("--rows", action="store_true", help="print every 2.x row too (v1 rows always are)")
    args = parser.parse_args()
    if args.only in (None, "2x"):
        collectives(args.rows)
    if args.only in (None, "v1"):
        workloads()


if __name__ == "__main__":
    main()
