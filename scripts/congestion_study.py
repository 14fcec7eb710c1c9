"""Congestion study: how much slower are collectives on the packet backend than the analytical model predicts, and why?

1. Collective time vs message size for all-reduce (ring, direct, halving-doubling) and all-to-all
   (ring, direct; halving-doubling does not implement all-to-all) on a torus (torus-4x4), a switch
   (switch-16) and a hierarchical topology (dgx-8x4), on both backends. The packet/analytical time
   ratio mixes two things, told apart here:
   - at sizes where the analytical time is mostly fixed latency (its intercept over sizes is at least
     half of it: "latency-bound"), the ratio is the packet backend's per-message latency model
     (router pipelines, packetization, whole cycles), not congestion;
   - congestion is the extra time per byte: the packet backend's slope of time against size over the
     analytical one's, between the two largest sizes (`congestion_slowdown`; NaN where even the
     largest size is latency-bound, so nothing can be said about congestion there).
2. Synthetic latency-vs-load curves (uniform, transpose, tornado) on the torus and the switch:
   where each saturates, bracketed by the loads measured (netsim.app.saturation). Each case's loads are
   fractions of its channel-load bound (netsim.app.traffic.ideal_saturation_load: the offered load at
   which its busiest link is full, from the topology's routes, no run), up to 1.2 times it: no
   network sustains a load above the bound, so the last loads are past saturation and the first
   below it, and the headline gives a bracket for every case (offered loads in flits/node/cycle
   go above 1 where a node has several links: 1.875 for uniform traffic on the 4x4 torus).

Writes collectives.csv, slowdown.csv (per size, with its regime), congestion.csv (per collective:
latency and congestion slowdowns), synth.csv, saturation.csv, slowdown.png and latency_vs_load.png
into the results folder and prints the headline, built from those tables. Points run in parallel
and resume (their results files are netsim sweep files). --quick: three sizes up to 4 MiB and
1500-cycle windows, about a minute on 2 cores. Full: 1 KiB to 256 MiB (the packet backend up to
--max-packet-size, 16 MiB by default: larger messages take it minutes each).

    python scripts/congestion_study.py --quick --out results/congestion
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from netsim.network_config import load_network
from netsim.app.plots import pyplot
from netsim.app.saturation import saturation_frame
from netsim.app.sweep import results_folder, study_arguments, sweep
from netsim.app.traffic import ideal_saturation_load
from netsim.units import format_size, parse_size

TOPOLOGIES = {"torus-4x4": "torus", "switch-16": "switch", "dgx-8x4": "hierarchical"}
SYNTH_TOPOLOGIES = ("torus-4x4", "switch-16")  # transpose needs a square torus or 4^k NPUs: not dgx-8x4's 32
PATTERNS = ("uniform", "transpose", "tornado")
PAIRS = [("all-reduce", "ring"), ("all-reduce", "direct"), ("all-reduce", "halving-doubling"),
         ("all-to-all", "ring"), ("all-to-all", "direct")]


def sizes(quick: bool, cap: int) -> tuple[list[int], list[int]]:
    """(analytical sizes, packet-backend sizes) in bytes."""
    if quick:
        every = [1024, 2**20, 4 * 2**20]
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


KEYS = ["topology", "network", "kind", "algorithm"]


def slowdown(frame: pd.DataFrame) -> pd.DataFrame:
    """Per collective and size: both times, their ratio, and the regime (latency-bound when the
    analytical intercept, the time it charges whatever the size, is at least half its time)."""
    table = frame.pivot_table(index=KEYS + ["size"], columns="backend",
                              values="collective_time_ns").dropna().reset_index()
    table = table.rename(columns={"analytical": "analytical_ns", "garnet": "packet_ns"})
    table["slowdown"] = table["packet_ns"] / table["analytical_ns"]
    intercepts = {key: fit(group, "analytical_ns")[0] for key, group in table.groupby(KEYS)}
    table["latency_share"] = [intercepts[tuple(row[k] for k in KEYS)] / row["analytical_ns"]
                              for row in table.to_dict("records")]
    table["regime"] = ["latency-bound" if share >= 0.5 else "bandwidth-bound" for share in table["latency_share"]]
    return table


def fit(group: pd.DataFrame, column: str) -> tuple[float, float]:
    """(intercept ns, slope ns/byte) of `column` against size through the two largest sizes."""
    top = group.sort_values("size").tail(2)
    (s1, t1), (s2, t2) = zip(top["size"], top[column])
    slope = (t2 - t1) / (s2 - s1)
    return t2 - slope * s2, slope


def congestion(slow: pd.DataFrame) -> pd.DataFrame:
    """Per collective: the latency slowdown at the smallest size, and the congestion slowdown (time
    per byte, packet over analytical) between the two largest sizes, where they are bandwidth-bound."""
    rows = []
    for key, group in slow.groupby(KEYS):
        smallest, largest = group.loc[group["size"].idxmin()], group.loc[group["size"].idxmax()]
        _, packet_slope = fit(group, "packet_ns")
        _, analytical_slope = fit(group, "analytical_ns")
        bound = largest["regime"] == "bandwidth-bound"
        rows.append({**dict(zip(KEYS, key)), "smallest_size": int(smallest["size"]),
                     "smallest_regime": smallest["regime"], "latency_slowdown": smallest["slowdown"],
                     "largest_size": int(largest["size"]),
                     "largest_regime": largest["regime"],
                     "congestion_slowdown": packet_slope / analytical_slope if bound else float("nan")})
    return pd.DataFrame(rows)


ZERO_LOAD = 0.01  # the load whose latency stands for zero-load latency
# loads measured, as fractions of each case's channel-load bound (see the module docstring)
QUICK_FRACTIONS = (0.25, 0.5, 0.75, 0.9, 1.0, 1.2)
FULL_FRACTIONS = tuple(round(0.05 * k, 2) for k in range(1, 25))  # 0.05 .. 1.2


def ideal_loads() -> dict[tuple[str, str], float]:
    """Each (network, pattern)'s channel-load bound on its saturation load (flits/node/cycle)."""
    return {(network, pattern): ideal_saturation_load(load_network(network, backend="garnet"), pattern)
            for network in SYNTH_TOPOLOGIES for pattern in PATTERNS}


def synth(out: Path, quick: bool, jobs: int | None, bounds: dict[tuple[str, str], float]) -> pd.DataFrame:
    points = [(network, pattern, rate) for (network, pattern), bound in bounds.items()
              for rate in [ZERO_LOAD] + [round(f * bound, 4) for f in (QUICK_FRACTIONS if quick else FULL_FRACTIONS)]]
    frame = sweep("synth", {"command": "synth", "cycles": 1500 if quick else 5000}, {}, out,
                  zipped=dict(zip(("network", "pattern", "rate"), map(list, zip(*points)))), jobs=jobs)
    return frame[["network", "pattern", "rate", "offered_load", "accepted_load", "avg_packet_latency_cycles",
                  "p99_packet_latency_cycles", "avg_hops", "packets", "drained"]]


def plot(out: Path, slow: pd.DataFrame, synthetic: pd.DataFrame, sat: pd.DataFrame) -> None:
    plt = pyplot()
    from matplotlib.ticker import FuncFormatter

    fig, axes = plt.subplots(1, len(TOPOLOGIES), figsize=(5.2 * len(TOPOLOGIES), 4.0), sharey=True,
                             constrained_layout=True)
    sizes = sorted(slow["size"].unique())
    for ax, (network, topology) in zip(axes, TOPOLOGIES.items()):
        part = slow[slow["network"] == network]
        latency = part[part["regime"] == "latency-bound"]
        ax.scatter(latency["size"], latency["slowdown"], s=120, facecolors="none", edgecolors="0.6",
                   label="analytical time mostly latency (circled)")
        for index, ((kind, algorithm), group) in enumerate(part.groupby(["kind", "algorithm"])):
            ax.plot(group["size"], group["slowdown"], marker="os^Dv"[index % 5],
                    linestyle=("-", "--", ":", "-.")[index % 4], label=f"{kind} {algorithm}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [format_size(int(size)) for size in sizes], fontsize=8)
        ax.minorticks_off()
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_title(f"{topology} ({network})", fontsize=10)
        ax.set_xlabel("size per NPU (bytes)")
    axes[0].set_ylabel("packet / analytical time (ratio)")
    axes[-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("collective time, packet backend over the analytical model (congestion: the growth with size; "
                 "congestion.csv)", fontsize=10)
    fig.savefig(out / "slowdown.png", dpi=120)
    plt.close(fig)
    fig, axes = plt.subplots(1, len(SYNTH_TOPOLOGIES), figsize=(5.2 * len(SYNTH_TOPOLOGIES), 4.0),
                             constrained_layout=True)
    for ax, network in zip(axes, SYNTH_TOPOLOGIES):
        loaded = synthetic[(synthetic["network"] == network) & (synthetic["rate"] != ZERO_LOAD)]
        for index, (pattern, group) in enumerate(loaded.groupby("pattern")):
            line, = ax.plot(group["rate"], group["avg_packet_latency_cycles"], marker="os^"[index % 3],
                            label=pattern)
            bracket = sat[(sat["network"] == network) & (sat["pattern"] == pattern)].iloc[0]
            if pd.notna(bracket["saturation_high"]):
                ax.axvline(bracket["saturation_high"], color=line.get_color(), linestyle=":", linewidth=1,
                           label=f"{pattern}: first load past saturation")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda value, _position: f"{value:g}"))
        ax.tick_params(axis="y", which="minor", labelsize=7)
        ax.set_title(network, fontsize=10)
        ax.set_xlabel("offered load per injecting node (flits/node/cycle)")
        ax.set_ylabel("average packet latency (cycles)")
        ax.legend(fontsize=7)
    fig.suptitle("synthetic traffic on the packet backend", fontsize=10)
    fig.savefig(out / "latency_vs_load.png", dpi=120)
    plt.close(fig)


def headline(slow: pd.DataFrame, cong: pd.DataFrame, sat: pd.DataFrame) -> str:
    """Three lines, every figure read from the tables written beside them."""
    judged = cong.dropna(subset=["congestion_slowdown"])
    if judged.empty:
        lines = ["congestion: no collective was bandwidth-bound at its largest size, so none can be judged"]
    else:
        worst = judged.loc[judged["congestion_slowdown"].idxmax()]
        per_topology = judged.groupby("topology")["congestion_slowdown"].median()
        lines = [f"congestion (time per byte, packet/analytical, {format_size(int(worst['largest_size']))} and the "
                 f"size below): largest {worst['congestion_slowdown']:.2f}x for {worst['kind']} {worst['algorithm']} "
                 f"on {worst['network']}; median per topology: "
                 + ", ".join(f"{t} {v:.2f}x" for t, v in per_topology.items())]
    latency = cong[cong["smallest_regime"] == "latency-bound"]
    if len(latency):
        sizes = ", ".join(format_size(int(size)) for size in sorted(latency["smallest_size"].unique()))
        lines.append(f"at {sizes}, latency-bound ({len(latency)} of {len(cong)} collectives): packet/analytical "
                     f"{latency['latency_slowdown'].min():.2f}x..{latency['latency_slowdown'].max():.2f}x, the packet "
                     f"backend's per-message latency (router pipelines, packetization, whole cycles), not congestion")
    lines.append("saturation (flits/node/cycle; the channel-load bound): " + ", ".join(
        f"{r.network} {r.pattern} {r.saturation} ({r.ideal_load:.4g})" for r in sat.itertuples()))
    return "\n".join(lines)


def main() -> None:
    parser = study_arguments(__doc__.split("\n")[0], "results/congestion", "three sizes, short windows (about a minute)")
    parser.add_argument("--max-packet-size", default="16MiB", help="largest size run on the packet backend")
    args = parser.parse_args()
    out = results_folder(args)
    frame = collectives(out, args.quick, parse_size(args.max_packet_size), args.jobs)
    slow = slowdown(frame)
    cong = congestion(slow)
    bounds = ideal_loads()
    synthetic = synth(out, args.quick, args.jobs, bounds)
    sat = saturation_frame(synthetic, ["network", "pattern"], ZERO_LOAD)
    sat["ideal_load"] = [bounds[(r.network, r.pattern)] for r in sat.itertuples()]
    frame.to_csv(out / "collectives.csv", index=False)
    slow.to_csv(out / "slowdown.csv", index=False)
    cong.to_csv(out / "congestion.csv", index=False)
    synthetic.to_csv(out / "synth.csv", index=False)
    sat.to_csv(out / "saturation.csv", index=False)
    plot(out, slow, synthetic, sat)
    print(headline(slow, cong, sat))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
