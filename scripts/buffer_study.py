"""Buffer study: the effect of buffer depth (flits per VC) and VC count on the packet backend.

As the ASTRA-sim tutorial's "effect of size of switch buffer" study, on a flat topology (switch-16:
one switch) and a hierarchical one (dgx-8x4: fully-connected nodes joined by switches), for every
buffer depth x VC count:

- the time of one all-reduce (256 KiB quick, 16 MiB full);
- one training iteration: ResNet-50 data-parallel (full; --quick uses the one-layer
  microAllReduce workload instead, since a packet-level ResNet-50 iteration takes ~15 s);
- the saturation throughput of uniform random traffic (highest offered load not saturated).

Writes buffers.csv and buffers.png into the results folder and prints the headline finding.
Points run in parallel and resume (their results files are netsim sweep files).

    python scripts/buffer_study.py --quick --out results/buffers
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from netsim import traffic
from netsim.plots import pyplot
from netsim.sweep import results_folder, study_arguments, sweep

NETWORKS = {"switch-16": "flat", "dgx-8x4": "hierarchical"}
KNOBS = ["garnet.buffer_flits", "garnet.vcs"]


def grid(quick: bool) -> dict:
    return {"network": list(NETWORKS),
            "garnet.buffer_flits": [2, 8] if quick else [1, 2, 4, 8, 16, 32],
            "garnet.vcs": [2, 4] if quick else [2, 4, 8]}


def measure(out: Path, quick: bool, jobs: int | None) -> pd.DataFrame:
    keys = ["network", *KNOBS]
    coll = sweep("allreduce", {"command": "collective", "kind": "all-reduce", "backend": "garnet",
                               "size": "256KiB" if quick else "16MiB"}, grid(quick), out, jobs=jobs)
    workload = "microAllReduce" if quick else "Resnet50_DataParallel"
    train = sweep("iteration", {"command": "run", "backend": "garnet", "workload": workload}, grid(quick), out,
                  jobs=jobs)
    rates = [0.002, 0.1, 0.2, 0.3, 0.4, 0.6] if quick else [0.002] + [round(0.05 * k, 2) for k in range(1, 21)]
    synthetic = sweep("saturation", {"command": "synth", "pattern": "uniform", "cycles": 500 if quick else 3000},
                      {**grid(quick), "rate": rates}, out, jobs=jobs)
    saturation = []
    for key, group in synthetic.groupby(keys):
        zero = group.loc[group["rate"] == 0.002, "avg_packet_latency_cycles"].iloc[0] or 1
        loaded = group[group["rate"] != 0.002]
        ok = [r["offered_load"] for r in loaded.to_dict("records") if not traffic.saturated(r, zero)]
        saturation.append({**dict(zip(keys, key)), "saturation_load": max(ok, default=0.0)})
    frame = coll[keys + ["collective_time_ns"]].merge(
        train[keys + ["end_to_end_time_ns"]].rename(columns={"end_to_end_time_ns": f"{workload}_iteration_ns"}),
        on=keys).merge(pd.DataFrame(saturation), on=keys)
    frame.insert(1, "topology", frame["network"].map(NETWORKS))
    return frame


def plot(out: Path, frame: pd.DataFrame) -> None:
    plt = pyplot()
    metrics = [c for c in frame.columns if c.endswith("_ns") or c == "saturation_load"]
    fig, axes = plt.subplots(len(NETWORKS), len(metrics), figsize=(4.5 * len(metrics), 3.3 * len(NETWORKS)),
                             squeeze=False)
    for row, network in enumerate(NETWORKS):
        part = frame[frame["network"] == network]
        for col, metric in enumerate(metrics):
            ax = axes[row][col]
            for vcs, group in part.groupby("garnet.vcs"):
                ax.plot(group["garnet.buffer_flits"], group[metric] / (1e3 if metric.endswith("_ns") else 1),
                        marker="o", label=f"{vcs} VCs")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("buffer depth (flits per VC)")
            ax.set_ylabel(metric.replace("_ns", " (us)"))
            ax.set_title(f"{NETWORKS[network]} ({network})", fontsize=9)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "buffers.png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def headline(frame: pd.DataFrame) -> str:
    iteration = [c for c in frame.columns if c.endswith("_iteration_ns")][0]
    lines = []
    for network, part in frame.groupby("network"):
        small = part.loc[part["garnet.buffer_flits"].idxmin()]
        best = part.loc[part["collective_time_ns"].idxmin()]
        lines.append(
            f"{NETWORKS[network]} {network}: all-reduce {small['collective_time_ns'] / best['collective_time_ns']:.2f}x "
            f"slower with {small['garnet.buffer_flits']:.0f}-flit buffers, {small['garnet.vcs']:.0f} VCs than the best "
            f"({best['garnet.buffer_flits']:.0f} flits, {best['garnet.vcs']:.0f} VCs); iteration "
            f"{part[iteration].max() / part[iteration].min():.3f}x between worst and best; saturation "
            f"{part['saturation_load'].min():.2f}..{part['saturation_load'].max():.2f} flits/node/cycle")
    return "\n".join(lines)


def main() -> None:
    args = study_arguments(__doc__.split("\n")[0], "results/buffers",
                           "two depths, two VC counts, small sizes (under a minute)").parse_args()
    out = results_folder(args)
    frame = measure(out, args.quick, args.jobs)
    frame.to_csv(out / "buffers.csv", index=False)
    plot(out, frame)
    print(headline(frame))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
