"""PNG plots of a run's output folder (`netsim report DIR --plot`), with matplotlib (extra `plot`).

- links_heatmap.png: on tori, each NPU's outgoing-link utilization laid out on the torus grid,
  one panel per link dimension (and per slice of the third dimension);
- links_bar.png: elsewhere (switches, hierarchies, fat-trees), utilization of every link;
- link_timeseries.png: utilization over time of the busiest links (link_timeseries.csv);
- packet_latency.png: the packet-latency distribution (packet backend);
- latency_vs_load.png: a synthetic-traffic sweep's latency against offered load.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from netsim import report
from netsim.errors import ConfigError

MISSING = "plots need matplotlib: pip install 'netsim[plot]'"
TIMESERIES_LINKS = 5


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend, or a one-line ConfigError when not installed."""
    try:
        import matplotlib
    except ModuleNotFoundError:
        raise ConfigError(MISSING) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def torus_sizes(summary: dict) -> tuple[int, ...] | None:
    """Dimension sizes when the run's topology is a torus (or ring), else None."""
    topology = summary.get("network", {}).get("topology", {})
    if topology.get("kind") != "torus":
        return None
    return tuple(int(dim.split()[1]) for dim in topology.get("dims", []))


def heatmap(plt, links: pd.DataFrame, sizes: tuple[int, ...], title: str):
    """Per link dimension, the utilization of each NPU's busiest outgoing link in that dimension."""
    sx = sizes[0]
    sy = sizes[1] if len(sizes) > 1 else 1
    slices = sizes[2] if len(sizes) > 2 else 1
    npu_links = links[(links["src"] < np.prod(sizes)) & (links["dim"] >= 0)]
    per_npu = npu_links.groupby(["dim", "src"])["utilization"].max()
    dims = sorted(npu_links["dim"].unique())
    fig, axes = plt.subplots(len(dims), slices, figsize=(2.8 * slices + 1, 2.6 * len(dims) + 0.6), squeeze=False)
    vmax = max(float(per_npu.max()) if len(per_npu) else 0.0, 1e-9)
    image = None
    for row, dim in enumerate(dims):
        for z in range(slices):
            grid = np.zeros((sy, sx))
            for y in range(sy):
                for x in range(sx):
                    grid[y, x] = per_npu.get((dim, x + sx * (y + sy * z)), 0.0)
            ax = axes[row][z]
            image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=vmax, origin="lower")
            ax.set_title(f"dim {dim}" + (f", z={z}" if slices > 1 else ""), fontsize=9)
            ax.set_xticks(range(sx))
            ax.set_yticks(range(sy))
    fig.colorbar(image, ax=axes, label="utilization", shrink=0.8)
    fig.suptitle(title, fontsize=10)
    return fig


def bars(plt, links: pd.DataFrame, title: str):
    fig, ax = plt.subplots(figsize=(max(6, 0.08 * len(links) + 2), 3.5))
    colours = plt.get_cmap("tab10")
    ax.bar(links["link_id"], links["utilization"], color=[colours(int(d) % 10) for d in links["dim"]])
    ax.set_xlabel("link id (colour: dimension)")
    ax.set_ylabel("utilization")
    ax.set_title(title, fontsize=10)
    return fig


def timeseries(plt, links: pd.DataFrame, series: pd.DataFrame, title: str):
    busiest = report.busiest_links(links, TIMESERIES_LINKS)
    util = report.interval_utilization(series)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for row in busiest.itertuples():
        one = util[util["link_id"] == row.link_id]
        ax.step(one["time_ns"] / 1e3, one["utilization"], where="pre", label=f"{row.src}->{row.dst}")
    ax.set_xlabel("simulated time (us)")
    ax.set_ylabel("utilization per interval")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return fig


def latency_histogram(plt, latency: pd.DataFrame, title: str):
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(latency["latency_cycles"], latency["packets"], width=1.0)
    ax.set_xlabel("packet latency (cycles)")
    ax.set_ylabel("packets")
    ax.set_title(title, fontsize=10)
    return fig


def latency_vs_load(plt, sweep: pd.DataFrame, title: str):
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(sweep["offered_load"], sweep["avg_packet_latency_cycles"], marker="o")
    ax.set_xlabel("offered load (flits/node/cycle)")
    ax.set_ylabel("average packet latency (cycles)")
    ax.set_title(title, fontsize=10)
    return fig


def write_plots(out_dir: Path, summary: dict, tables: dict[str, pd.DataFrame]) -> list[Path]:
    """Every plot the folder's tables allow; returns the files written."""
    plt = pyplot()
    name = summary.get("name", out_dir.name)
    figures = {}
    links = tables.get("links")
    if links is not None and len(links):
        sizes = torus_sizes(summary)
        if sizes:
            figures["links_heatmap"] = heatmap(plt, links, sizes, f"link utilization: {name}")
        else:
            figures["links_bar"] = bars(plt, links, f"link utilization: {name}")
        series = tables.get("link_timeseries")
        if series is not None and series["time_ns"].nunique() > 1:
            figures["link_timeseries"] = timeseries(plt, links, series, f"busiest links over time: {name}")
    if "packet_latency" in tables:
        figures["packet_latency"] = latency_histogram(plt, tables["packet_latency"], f"packet latency: {name}")
    if "sweep" in tables:
        figures["latency_vs_load"] = latency_vs_load(plt, tables["sweep"], f"latency vs load: {name}")
    written = []
    for stem, figure in figures.items():
        path = out_dir / f"{stem}.png"
        figure.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(figure)
        written.append(path)
    return written
