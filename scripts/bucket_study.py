"""DDP gradient bucketing: iteration time against bucket size (ResNet-50, data parallel).

    python scripts/bucket_study.py [--network torus-4x4] [--backend garnet] [--out results/bucket_study]

Writes bucket_study.csv and, when matplotlib is importable, bucket_study.png (else says so).
"Per layer" is ASTRA-sim's DATA loop (one all-reduce per layer, no bucketing).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from netsim.network_config import BACKEND_NAMES, load_network
from netsim.app.runner import run_training
from netsim.units import parse_size
from system import load_system
from workload import load_workload

SIZES = ("256KiB", "1MiB", "4MiB", "16MiB", "25MiB", "64MiB", "256MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", default="torus-4x4")
    parser.add_argument("--workload", default="Resnet50_DataParallel")
    parser.add_argument("--backend", choices=BACKEND_NAMES, help="override the network's backend (default: its own)")
    parser.add_argument("--out", default="results/bucket_study", help="results folder (default results/bucket_study)")
    args = parser.parse_args()
    network = load_network(args.network, [], args.backend)
    system, base = load_system("default", []), load_workload(args.workload)
    rows = []
    for label in ("per layer", *SIZES):
        workload = base if label == "per layer" else base.with_options(bucket_size=[parse_size(label)])
        s = run_training(network, system, workload, passes=2).summary
        rows.append({"bucket_size": label, "bucket_bytes": 0 if label == "per layer" else parse_size(label),
                     "iteration_time_ns": s["end_to_end_time_ns"] / 2, "compute_time_ns": s["compute_time_ns"] / 2,
                     "exposed_comm_time_ns": s["exposed_comm_time_ns"] / 2})
        print(f"{label:>10}: iteration {rows[-1]['iteration_time_ns'] / 1e3:10.1f} us, "
              f"exposed {rows[-1]['exposed_comm_time_ns'] / 1e3:10.1f} us")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(out / "bucket_study.csv", index=False)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"wrote {out / 'bucket_study.csv'} (matplotlib is not installed: no plot)")
        return
    sized = frame[frame["bucket_bytes"] > 0]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(sized["bucket_bytes"] / 2**20, sized["iteration_time_ns"] / 1e3, "o-", label="DDP buckets")
    ax.axhline(frame.iloc[0]["iteration_time_ns"] / 1e3, ls="--", color="grey", label="per layer (ASTRA-sim DATA)")
    ax.set_xscale("log")
    ax.set_xlabel("bucket size (MiB)")
    ax.set_ylabel("iteration time (us)")
    ax.set_title(f"{args.workload} on {args.network} ({network.backend})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "bucket_study.png", dpi=120)
    print(f"wrote {out / 'bucket_study.csv'} and {out / 'bucket_study.png'}")


if __name__ == "__main__":
    main()
