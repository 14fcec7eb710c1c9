"""Routing study: what ECMP's flow hashing costs collectives on a cluster fabric, against per-packet spraying and adaptive routing.

On the rail-optimized cluster (rail-128: 16 servers of 8 GPUs, 2 leaves per rail, 8 spines) and
the fat-tree (fat-tree-64: a 4-ary 3-tree), the packet backend runs an all-reduce (ring and
direct) and an all-to-all (direct) of 1 MiB to 256 MiB under `garnet.routing` = `ecmp` (several
seeds: each seed hashes the flows onto other paths), `spray` and `adaptive`. Per point, besides
the collective time, the busiest-link imbalance: the bytes of the busiest switch-to-switch link
(the fabric's multipath tier) over the mean of those links (1 = perfectly even).

Writes points.csv (every point), summary.csv (per network, collective, size and routing: time,
ECMP's min/median/max over seeds, imbalance) and routing.png (time vs size per routing with
ECMP's seed spread as a band, and each routing's time over adaptive routing's) into the results
folder, and prints the headline. Points run in parallel and resume (netsim sweep files).
--quick: 1 and 4 MiB, 3 ECMP seeds (minutes on 2 cores); full: 1-256 MiB by 4x, 5 ECMP seeds
(spraying turns the fast-forward off: its 256 MiB points take many minutes each).

    python scripts/routing_study.py --quick --out results/routing
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from netsim.app.plots import pyplot
from netsim.app.sweep import results_folder, study_arguments, sweep
from netsim.units import format_size

NETWORKS = {"rail-128": "rail-optimized, 128 GPUs", "fat-tree-64": "fat-tree, 64 NPUs"}
COLLECTIVES = [("all-reduce", "ring"), ("all-reduce", "direct"), ("all-to-all", "direct")]
ROUTINGS = ("ecmp", "spray", "adaptive")
MULTIPATH_TIER = "switch-switch"  # the links whose load a routing spreads (leaf-spine, between tree levels)


def sizes(quick: bool) -> list[int]:
    return [2**20, 4 * 2**20] if quick else [2**20 * 4**k for k in range(5)]  # 1 MiB .. 256 MiB


def run_points(out: Path, quick: bool, jobs: int | None) -> pd.DataFrame:
    """Every point: one sweep per routing, ECMP once per seed (a sweep's seed reseeds its points)."""
    base = {"command": "collective", "backend": "garnet"}
    grid = {"network": list(NETWORKS), "size": sizes(quick)}
    zipped = {"kind": [kind for kind, _ in COLLECTIVES], "algorithm": [algorithm for _, algorithm in COLLECTIVES]}
    frames = []
    for routing in ROUTINGS:
        for seed in range(3 if quick else 5) if routing == "ecmp" else (0,):
            frame = sweep(f"{routing}-seed{seed}", {**base, "garnet.routing": routing}, grid, out, zipped, seed=seed,
                          jobs=jobs)
            frame["routing"], frame["study_seed"] = routing, seed
            frame["imbalance"] = [busiest_link_imbalance(out / folder) for folder in frame["folder"]]
            frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    return frame[["network", "kind", "algorithm", "size", "routing", "study_seed", "seed", "collective_time_ns",
                  "busbw_GBps", "imbalance", "max_link_utilization"]]


def busiest_link_imbalance(folder: Path) -> float:
    """Bytes of the busiest multipath-tier link over the mean of that tier's links."""
    links = pd.read_csv(folder / "links.csv")
    tier = links[links["kind"] == MULTIPATH_TIER]["bytes"]
    return float(tier.max() / tier.mean()) if tier.mean() > 0 else float("nan")


KEYS = ["network", "kind", "algorithm", "size", "routing"]


def summarize(points: pd.DataFrame) -> pd.DataFrame:
    """Per network, collective, size and routing: time (ECMP: median, min and max over its seeds),
    imbalance (its median), and the time over adaptive routing's."""
    table = points.groupby(KEYS).agg(time_ns=("collective_time_ns", "median"),
                                     time_min_ns=("collective_time_ns", "min"),
                                     time_max_ns=("collective_time_ns", "max"),
                                     imbalance=("imbalance", "median"), seeds=("seed", "count")).reset_index()
    adaptive = table[table["routing"] == "adaptive"].set_index(KEYS[:-1])["time_ns"]
    reference = [adaptive[tuple(row[k] for k in KEYS[:-1])] for row in table.to_dict("records")]
    for column in ("time_ns", "time_min_ns", "time_max_ns"):
        table[column.replace("time", "over_adaptive").replace("_ns", "")] = table[column] / reference
    return table


# colour, marker, line style, drawing order: spray dashed over ECMP, whose path it takes where a
# message is one packet (the derived packets of these networks hold 104 kB: 1 MiB collectives' messages)
STYLE = {"ecmp": ("tab:red", "o", "-", 2), "spray": ("tab:blue", "s", "--", 3), "adaptive": ("tab:green", "^", "-", 1)}
LABELS = {"ecmp": "ecmp (median of {seeds} seeds; band: min-max)",
          "spray": "spray (dashed: on ECMP's line where a message is one packet)", "adaptive": "adaptive"}


def plot(out: Path, table: pd.DataFrame) -> None:
    plt = pyplot()
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda value, _position: f"{value:g}")
    networks = list(NETWORKS)
    fig, axes = plt.subplots(2 * len(networks), len(COLLECTIVES), figsize=(4.6 * len(COLLECTIVES), 3.0 * 2 * len(networks)),
                             sharex=True, constrained_layout=True)
    all_sizes = sorted(table["size"].unique())
    for row, network in enumerate(networks):
        for col, (kind, algorithm) in enumerate(COLLECTIVES):
            part = table[(table["network"] == network) & (table["kind"] == kind) & (table["algorithm"] == algorithm)]
            time_ax, ratio_ax = axes[2 * row][col], axes[2 * row + 1][col]
            for routing in ROUTINGS:
                color, marker, style, order = STYLE[routing]
                line = part[part["routing"] == routing].sort_values("size")
                label = LABELS[routing].format(seeds=int(line["seeds"].max()))
                look = dict(color=color, marker=marker, linestyle=style, zorder=order, markersize=5)
                time_ax.plot(line["size"], line["time_ns"] / 1e3, label=label, **look)
                ratio_ax.plot(line["size"], line["over_adaptive"], **look)
                if routing == "ecmp":
                    time_ax.fill_between(line["size"], line["time_min_ns"] / 1e3, line["time_max_ns"] / 1e3,
                                         color=color, alpha=0.2)
                    ratio_ax.fill_between(line["size"], line["over_adaptive_min"], line["over_adaptive_max"],
                                          color=color, alpha=0.2)
            time_ax.set_xscale("log", base=2)
            time_ax.set_yscale("log")
            time_ax.yaxis.set_major_formatter(plain)
            time_ax.yaxis.set_minor_formatter(plain)
            time_ax.tick_params(axis="y", which="minor", labelsize=7)
            time_ax.set_title(f"{NETWORKS[network]}: {kind} ({algorithm})", fontsize=10)
            time_ax.set_ylabel("collective time (us)")
            ratio_ax.axhline(1.0, color="grey", lw=0.8)
            ratio_ax.set_ylabel("time / adaptive's")
            ratio_ax.set_xticks(all_sizes, [format_size(int(size)) for size in all_sizes], fontsize=8)
            ratio_ax.minorticks_off()
    for ax in axes[-1]:
        ax.set_xlabel("collective size")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize=9)
    fig.suptitle("collective time by routing: ECMP hashes flows onto paths (some seeds collide), spray and adaptive "
                 "spread packets", fontsize=11)
    fig.savefig(out / "routing.png", dpi=110)
    plt.close(fig)


def headline(table: pd.DataFrame) -> str:
    """One line per network, every figure read from the summary table."""
    lines = []
    for network, part in table.groupby("network"):
        ecmp = part[part["routing"] == "ecmp"]
        worst = ecmp.loc[ecmp["over_adaptive_max"].idxmax()]
        spray = part[part["routing"] == "spray"]["over_adaptive"]
        lines.append(f"{network}: ECMP's worst seed {worst['over_adaptive_max']:.2f}x adaptive's time ({worst['kind']} "
                     f"{worst['algorithm']} {format_size(int(worst['size']))}; median seed "
                     f"{worst['over_adaptive']:.2f}x); spray {spray.min():.2f}x..{spray.max():.2f}x; busiest-link "
                     "imbalance (median) " + ", ".join(f"{routing} {part[part['routing'] == routing]['imbalance'].median():.2f}"
                                                      for routing in ROUTINGS))
    return "\n".join(lines)


def main() -> None:
    parser = study_arguments(__doc__.split("\n")[0], "results/routing", "1 and 4 MiB, 3 ECMP seeds (minutes)")
    args = parser.parse_args()
    out = results_folder(args)
    points = run_points(out, args.quick, args.jobs)
    table = summarize(points)
    points.to_csv(out / "points.csv", index=False)
    table.to_csv(out / "summary.csv", index=False)
    plot(out, table)
    print(headline(table))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
