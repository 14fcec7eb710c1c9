"""Congestion study: how much slower are collectives on the packet backend than the analytical model predicts?

1. Collective time vs message size for all-reduce (ring, direct, halving-doubling) and all-to-all
   (ring, direct; halving-doubling does not implement all-to-all) on a torus (torus-4x4), a switch
   (switch-16) and a hierarchical topology (dgx-8x4), on both backends. The congestion slowdown is
   packet time / analytical time.
2. Synthetic latency-vs-load curves (uniform, transpose, tornado) on the torus and the switch:
   where each saturates (the highest offered load that is not saturated, as `netsim synth --sweep`).

Writes collectives.csv, slowdown.csv, synth.csv, saturation.csv, slowdown.png and latency_vs_load.png
into the results folder and prints the headline finding. Points run in parallel and resume (their
results files are netsim sweep files). --quick: small sizes and loads, under a minute on 2 cores.
Full: 1 KiB to 256 MiB (the packet backend up to --max-packet-size, 16 MiB by default: larger
messages take it minutes each at ~400k flit-hops/s).

    python scripts/congestion_study.py --quick --out results/congestion
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from netsim import traffic
from netsim.plots import pyplot
from netsim.sweep import results_folder, study_arguments, sweep
from netsim.units import format_size, parse_size

TOPOLOGIES = {"torus-4x4": "torus", "switch-16": "switch", "dgx-8x4": "hierarchical"}
SYNTH_TOPOLOGIES = ("torus-4x4", "switch-16")  # transpose needs a square torus or 4^k NPUs: not dgx-8x4's 32
PATTERNS = ("uniform", "transpose", "tornado")
PAIRS = [("all-reduce", "ring"), ("all-reduce", "direct"), ("all-reduce", "halving-doubling"),
         ("all-to-all", "ring"), ("all-to-all", "direct")]


def sizes(quick: bool, cap: int) -> tuple[list[int], list[int]]:
    """(analytical sizes, packet-backend sizes) in bytes."""
    if quick:
        every = [1024, 64 * 1024]
    else:
        every = [1024 * 4**k for k in range(10)]  # 1 KiB .. 256 MiB
    return every, [s for s in every if s <= cap]


def collectives(out: Path, quick: bool, cap: int, jobs: int | None) -> pd.DataFrame:
    analytical_sizes, packet_sizes = sizes(quick, cap)
    frames = []
    for backend, size_list in (("analytical", analytical_sizes), ("garnet", packet_sizes)):
        frames.append(sweep(f"collectives-{backend}", {"command": "collective", "backend": backend},
                            {"network": list(TOPOLOGIES), "size": size_list}, out,
                            zipped={"kind": [k for k, _ in PAIRS], "algorithm": [a for _, a in PAIRS]}, jobs=jobs))
    frame = pd.concat(frames, ignore_index=True)
    frame["topology"] = frame["network"].map(TOPOLOGIES)
    return frame[["topology", "network", "kind", "algorithm", "size", "backend", "collective_time_ns", "algbw_GBps",
                  "busbw_GBps", "bytes_sent_total", "events"]]


def slowdown(frame: pd.DataFrame) -> pd.DataFrame:
    keys = ["topology", "network", "kind", "algorithm", "size"]
    table = frame.pivot_table(index=keys, columns="backend", values="collective_time_ns").dropna().reset_index()
    table["slowdown"] = table["garnet"] / table["analytical"]
    return table.rename(columns={"analytical": "analytical_ns", "garnet": "packet_ns"})


def synth(out: Path, quick: bool, jobs: int | None) -> pd.DataFrame:
    rates = [0.05, 0.2, 0.4, 0.6] if quick else [round(0.05 * k, 2) for k in range(1, 21)]
    frame = sweep("synth", {"command": "synth", "cycles": 500 if quick else 4000},
                  {"network": list(SYNTH_TOPOLOGIES), "pattern": list(PATTERNS), "rate": [0.002] + rates}, out,
                  jobs=jobs)
    zero_load = frame[frame["rate"] == 0.002].set_index(["network", "pattern"])["avg_packet_latency_cycles"]
    frame = frame[frame["rate"] != 0.002].copy()
    frame["saturated"] = [traffic.saturated(row, zero_load[row["network"], row["pattern"]] or 1)
                          for row in frame.to_dict("records")]
    return frame[["network", "pattern", "rate", "offered_load", "accepted_load", "avg_packet_latency_cycles",
                  "p99_packet_latency_cycles", "avg_hops", "drained", "saturated"]]


def saturation(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (network, pattern), group in frame.groupby(["network", "pattern"]):
        ok = group.loc[~group["saturated"], "offered_load"]
        rows.append({"network": network, "pattern": pattern, "saturation_load": float(ok.max()) if len(ok) else 0.0,
                     "saturated_within_range": bool(group["saturated"].any())})
    return pd.DataFrame(rows)


def plot(out: Path, slow: pd.DataFrame, synthetic: pd.DataFrame) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(TOPOLOGIES), figsize=(5 * len(TOPOLOGIES), 3.8), sharey=True)
    for ax, (network, topology) in zip(axes, TOPOLOGIES.items()):
        for (kind, algorithm), group in slow[slow["network"] == network].groupby(["kind", "algorithm"]):
            ax.plot(group["size"], group["slowdown"], marker="o", label=f"{kind} {algorithm}")
        ax.set_xscale("log", base=2)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_title(f"{topology} ({network})")
        ax.set_xlabel("bytes per NPU")
    axes[0].set_ylabel("packet / analytical time")
    axes[0].legend(fontsize=8)
    fig.suptitle("congestion slowdown of collectives")
    fig.savefig(out / "slowdown.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    fig, axes = plt.subplots(1, len(SYNTH_TOPOLOGIES), figsize=(5 * len(SYNTH_TOPOLOGIES), 3.8))
    for ax, network in zip(axes, SYNTH_TOPOLOGIES):
        for pattern, group in synthetic[synthetic["network"] == network].groupby("pattern"):
            ax.plot(group["offered_load"], group["avg_packet_latency_cycles"], marker="o", label=pattern)
        ax.set_yscale("log")
        ax.set_title(network)
        ax.set_xlabel("offered load (flits/node/cycle)")
    axes[0].set_ylabel("average packet latency (cycles)")
    axes[0].legend(fontsize=8)
    fig.savefig(out / "latency_vs_load.png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def headline(slow: pd.DataFrame, sat: pd.DataFrame) -> str:
    worst = slow.loc[slow["slowdown"].idxmax()]
    per_topology = slow.groupby("topology")["slowdown"].median()
    lines = [f"largest congestion slowdown: {worst['slowdown']:.2f}x for {worst['kind']} {worst['algorithm']} of "
             f"{format_size(int(worst['size']))} on {worst['network']}",
             "median slowdown per topology: " + ", ".join(f"{t} {v:.2f}x" for t, v in per_topology.items())]
    lines.append("saturation (flits/node/cycle): " + ", ".join(
        f"{r.network} {r.pattern} {'>' if not r.saturated_within_range else ''}{r.saturation_load:.2f}"
        for r in sat.itertuples()))
    return "\n".join(lines)


def main() -> None:
    parser = study_arguments(__doc__.split("\n")[0], "results/congestion", "small sizes and loads (under a minute)")
    parser.add_argument("--max-packet-size", default="16MiB", help="largest size run on the packet backend")
    args = parser.parse_args()
    out = results_folder(args)
    frame = collectives(out, args.quick, parse_size(args.max_packet_size), args.jobs)
    slow = slowdown(frame)
    synthetic = synth(out, args.quick, args.jobs)
    sat = saturation(synthetic)
    frame.to_csv(out / "collectives.csv", index=False)
    slow.to_csv(out / "slowdown.csv", index=False)
    synthetic.to_csv(out / "synth.csv", index=False)
    sat.to_csv(out / "saturation.csv", index=False)
    plot(out, slow, synthetic)
    print(headline(slow, sat))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
