"""Buffer study: the effect of buffer depth (flits per VC) and VC count on the packet backend.

As the ASTRA-sim tutorial's "effect of size of switch buffer" study, on a flat topology (switch-16:
one switch) and a hierarchical one (dgx-8x4: fully-connected nodes joined by switches), for every
buffer depth x VC count:

- the time of one all-reduce (256 KiB quick, 16 MiB full);
- one training iteration: ResNet-50 data-parallel (full; --quick uses the one-layer
  microAllReduce workload instead, since a packet-level ResNet-50 iteration takes ~15 s);
- the saturation throughput of uniform random traffic, bracketed by the loads measured
  (netsim.app.saturation: a load is past saturation when its packets did not drain, its latency passed
  3x zero-load, or its accepted load fell short of the offered by more than counting noise;
  "< x" when even the lowest load was, "> x" when none was). Quick mode measures 2000-cycle
  windows (after 400 warm-up cycles) at 8 loads: long enough that noise alone reads as saturation
  in fewer than 1 in 300 points.

Writes buffers.csv and buffers.png into the results folder and prints the headline, built from the
same table. Points run in parallel and resume (their results files are netsim sweep files).

    python scripts/buffer_study.py --quick --out results/buffers
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from netsim.app.plots import pyplot
from netsim.app.saturation import saturation_frame
from netsim.app.sweep import results_folder, study_arguments, sweep

NETWORKS = {"switch-16": "flat", "dgx-8x4": "hierarchical"}
KNOBS = ["garnet.buffer_flits", "garnet.vcs"]
ZERO_LOAD = 0.01  # the load whose latency stands for zero-load latency


def grid(quick: bool) -> dict:
    return {"network": list(NETWORKS),
            "garnet.buffer_flits": [2, 8] if quick else [1, 2, 4, 8, 16, 32],
            "garnet.vcs": [2, 4] if quick else [2, 4, 8]}


def loads(quick: bool) -> list[float]:
    """Offered loads measured (flits/node/cycle), besides ZERO_LOAD."""
    if quick:
        return [0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6]
    return [0.025] + [round(0.05 * k, 2) for k in range(1, 21)]


def measure(out: Path, quick: bool, jobs: int | None) -> pd.DataFrame:
    keys = ["network", *KNOBS]
    coll = sweep("allreduce", {"command": "collective", "kind": "all-reduce", "backend": "garnet",
                               "size": "256KiB" if quick else "16MiB"}, grid(quick), out, jobs=jobs)
    workload = "microAllReduce" if quick else "Resnet50_DataParallel"
    train = sweep("iteration", {"command": "run", "backend": "garnet", "workload": workload}, grid(quick), out,
                  jobs=jobs)
    synthetic = sweep("saturation", {"command": "synth", "pattern": "uniform", "cycles": 2000 if quick else 5000},
                      {**grid(quick), "rate": [ZERO_LOAD] + loads(quick)}, out, jobs=jobs)
    frame = coll[keys + ["collective_time_ns"]].merge(
        train[keys + ["end_to_end_time_ns"]].rename(columns={"end_to_end_time_ns": f"{workload}_iteration_ns"}),
        on=keys).merge(saturation_frame(synthetic, keys, ZERO_LOAD), on=keys)
    frame.insert(1, "topology", frame["network"].map(NETWORKS))
    return frame


def vc_style(index: int) -> dict:
    """How the line of the `index`-th VC count is drawn: its own marker and line style, and each
    marker smaller and hollower than the one before, so lines that coincide (2 and 4 VCs often
    give the same times) still show every marker."""
    markers, styles = "os^D", ("-", "--", ":", "-.")
    return {"marker": markers[index % 4], "linestyle": styles[index % 4], "markersize": max(3, 9 - 3 * index),
            "fillstyle": "full" if index == 0 else "none", "markeredgewidth": 1.5}


def plot(out: Path, frame: pd.DataFrame) -> None:
    plt = pyplot()
    times = [c for c in frame.columns if c.endswith("_ns")]
    fig, axes = plt.subplots(len(NETWORKS), len(times) + 1, figsize=(4.6 * (len(times) + 1), 3.4 * len(NETWORKS)),
                             squeeze=False, constrained_layout=True)
    depths = sorted(frame["garnet.buffer_flits"].unique())
    for row, network in enumerate(NETWORKS):
        part = frame[frame["network"] == network]
        for col, metric in enumerate(times):
            ax = axes[row][col]
            for index, (vcs, group) in enumerate(part.groupby("garnet.vcs")):
                ax.plot(group["garnet.buffer_flits"], group[metric] / 1e3, label=f"{vcs} VCs", **vc_style(index))
            ax.set_ylabel(metric.removesuffix("_ns").replace("_", " ") + " (us)")
        ax = axes[row][len(times)]
        for index, (vcs, group) in enumerate(part.groupby("garnet.vcs")):
            known = group["saturation_low"].notna()
            bounded = ~known & group["saturation_high"].notna()
            high = group["saturation_high"].fillna(group["saturation_low"])
            line, = ax.plot(group["garnet.buffer_flits"][known], group["saturation_low"][known], label=f"{vcs} VCs",
                            **vc_style(index))
            ax.vlines(group["garnet.buffer_flits"][known], group["saturation_low"][known], high[known],
                      color=line.get_color(), alpha=0.5)
            if bounded.any():
                ax.plot(group["garnet.buffer_flits"][bounded], group["saturation_high"][bounded], "v",
                        color=line.get_color(), markersize=9, label=f"{vcs} VCs: below the lowest load")
        ax.set_ylabel("saturation load (flits/node/cycle)")
        ax.set_ylim(bottom=0)
        for ax in axes[row]:
            ax.set_xscale("log", base=2)
            ax.set_xticks(depths, [str(d) for d in depths])
            ax.minorticks_off()
            ax.set_xlabel("buffer depth (flits per VC)")
            ax.set_title(f"{NETWORKS[network]} ({network})", fontsize=9)
            ax.legend(fontsize=7, loc="best")
    fig.suptitle("buffer depth and VCs on the packet backend (saturation: sustained load, bar up to the first "
                 "load past saturation)", fontsize=10)
    fig.savefig(out / "buffers.png", dpi=120)
    plt.close(fig)


def headline(frame: pd.DataFrame) -> str:
    """One line per network, every figure read from `frame` (the table buffers.csv holds)."""
    iteration = [c for c in frame.columns if c.endswith("_iteration_ns")][0]
    lines = []
    for network, part in frame.groupby("network", sort=False):
        small = part.loc[part["garnet.buffer_flits"].idxmin()]
        best = part.loc[part["collective_time_ns"].idxmin()]
        worst_sat = part.loc[part["saturation_low"].fillna(-1).idxmin()]
        best_sat = part.loc[part["saturation_low"].fillna(-1).idxmax()]
        lines.append(
            f"{NETWORKS[network]} {network}: all-reduce {small['collective_time_ns'] / best['collective_time_ns']:.2f}x "
            f"slower with {small['garnet.buffer_flits']:.0f}-flit buffers, {small['garnet.vcs']:.0f} VCs than the best "
            f"({best['garnet.buffer_flits']:.0f} flits, {best['garnet.vcs']:.0f} VCs); iteration "
            f"{part[iteration].max() / part[iteration].min():.3f}x between worst and best; saturation "
            f"{worst_sat['saturation']} ({worst_sat['garnet.buffer_flits']:.0f} flits, {worst_sat['garnet.vcs']:.0f} "
            f"VCs) to {best_sat['saturation']} ({best_sat['garnet.buffer_flits']:.0f} flits, "
            f"{best_sat['garnet.vcs']:.0f} VCs) flits/node/cycle")
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
