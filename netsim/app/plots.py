"""PNG plots of a run's output folder (`netsim report DIR --plot`) and of a sweep's results, with
matplotlib (extra `plot`). Every figure labels its axes with units, tells its series apart in a
legend, and marks link utilization above 1 (only a backend that does not model congestion gets
there: see the run's warning).

- links_heatmap.png: tori and rings: each NPU's outgoing link, per dimension and direction (+/-),
  on the torus grid (coordinates on the axes; one panel column per slice of a third dimension);
- links_bar.png: elsewhere: every link's utilization, grouped by dimension (level) and kind;
- link_timeseries.png: utilization per sampling interval: the band of all links (min, median,
  max) and the busiest links;
- packet_latency.png: the packet-latency distribution as a CDF, p50 and p99 marked (packet backend);
- latency_vs_load.png: a synthetic-traffic sweep: latency against offered load with the
  saturation load marked, and accepted against offered load;
- a sweep's STUDY.results.png: its headline metric against a varied parameter (a numeric one if
  any), one line per combination of the others.
Times are shown in ns, us or ms, whichever reads best; cycles become time when the clock is known.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from netsim.app import report
from netsim.errors import ConfigError
from netsim.files import whole_file
from netsim.topology.base import coords_of
from netsim.units import UnitError, format_size, parse_size, time_unit

MISSING = "plots need matplotlib: pip install 'netsim[plot]'"
BUSIEST_SHOWN = 3  # links drawn one by one in the time series
OVER = "#d62728"  # red: utilization above 1


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


def direction(src: int, dst: int, dim: int, sizes: tuple[int, ...]) -> str:
    """'+' when a torus link goes up its dimension's coordinate (around the ring), else '-'."""
    size = sizes[dim]
    return "+" if (coords_of(dst, sizes)[dim] - coords_of(src, sizes)[dim]) % size == 1 else "-"


def heatmap(plt, links: pd.DataFrame, sizes: tuple[int, ...], title: str):
    """Each NPU's outgoing link utilization on the torus grid, one panel per dimension (row) and
    direction (column): x is the dim 0 coordinate, y the dim 1 coordinate, and the slices of a third
    dimension sit side by side (z = 0, 1, ...). Cells above 1 are outlined in red with their value."""
    npus = int(np.prod(sizes))
    sx, sy = sizes[0], sizes[1] if len(sizes) > 1 else 1
    slices = sizes[2] if len(sizes) > 2 else 1
    width = sx * slices + (slices - 1)  # one empty column between slices
    npu_links = links[(links["src"] < npus) & (links["dst"] < npus) & (links["dim"] >= 0)].copy()
    npu_links["direction"] = [direction(s, d, int(k), sizes) for s, d, k in
                              zip(npu_links["src"], npu_links["dst"], npu_links["dim"])]
    dims = sorted(int(d) for d in npu_links["dim"].unique())
    peak = float(npu_links["utilization"].max()) if len(npu_links) else 0.0
    vmax = max(peak, 1e-9) if peak <= 1.0 else 1.0  # above 1: the colour saturates and the cell is outlined
    cell = min(0.45, 5.0 / width) if sy > 1 else min(0.5, 9.0 / width)  # inches per NPU cell
    ring = sy == 1  # one row of NPUs: the two directions one above the other, the colour bar below
    rows, columns = (2, 1) if ring else (len(dims), 2)
    fig, axes = plt.subplots(rows, columns, squeeze=False, constrained_layout=True,
                             figsize=(1.2 + columns * (cell * width + 0.7) + (0 if ring else 1.2),
                                      0.6 + rows * (cell * sy + (1.5 if slices > 1 else 1.2)) + (0.9 if ring else 0)))
    image = None
    for row, dim in enumerate(dims):
        for column, sign in enumerate("+-"):
            ax = axes[column][0] if ring else axes[row][column]
            chosen = npu_links[(npu_links["dim"] == dim) & (npu_links["direction"] == sign)]
            if chosen.empty:  # a dimension of 2: one neighbour, its link counted as +
                ax.axis("off")
                ax.text(0.5, 0.5, f"dim {dim}: size 2, one link\neach way (shown as +)", ha="center", va="center",
                        fontsize=8, transform=ax.transAxes)
                continue
            per_npu = dict(zip(chosen["src"], chosen["utilization"]))
            grid = np.full((sy, width), np.nan)
            for z in range(slices):
                for y in range(sy):
                    for x in range(sx):
                        grid[y, z * (sx + 1) + x] = per_npu.get(x + sx * (y + sy * z), np.nan)
            image = ax.imshow(np.minimum(grid, vmax), cmap="viridis", vmin=0, vmax=vmax, origin="lower")
            for y, x in zip(*np.nonzero(grid > 1.0)):
                ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor=OVER, linewidth=2))
                ax.text(x, y, f"{grid[y, x]:.1f}", ha="center", va="center", color=OVER, fontsize=7,
                        fontweight="bold")
            ax.set_xticks([z * (sx + 1) + x for z in range(slices) for x in range(sx)],
                          [str(x) for _ in range(slices) for x in range(sx)], fontsize=7)
            ax.set_yticks(range(sy) if sy > 1 else [], [str(y) for y in range(sy)] if sy > 1 else [], fontsize=7)
            if slices > 1:
                top = ax.secondary_xaxis("top")
                top.set_xticks([z * (sx + 1) + (sx - 1) / 2 for z in range(slices)],
                               [f"z = {z}" for z in range(slices)], fontsize=7)
                top.tick_params(length=0)
            ax.set_title(f"dim {dim}, {sign} direction", fontsize=9)
            ax.set_xlabel("x (dim 0 coordinate)" + (", per z (dim 2)" if slices > 1 else ""), fontsize=8)
            ax.set_ylabel("y (dim 1 coordinate)" if sy > 1 else "", fontsize=8)
    label = "utilization (busy / simulated time)" + ("\nred: above 1, value shown" if peak > 1 else "")
    fig.colorbar(image, ax=axes, label=label, shrink=0.8, orientation="horizontal" if ring else "vertical")
    fig.suptitle(title, fontsize=10)
    return fig


def bars(plt, links: pd.DataFrame, title: str):
    """Every link's utilization, grouped by dimension and kind (a colour and legend entry each);
    a line at 1 and red bars when a link went above it."""
    ordered = links.sort_values(["dim", "kind", "link_id"]).reset_index(drop=True)
    groups = list(dict.fromkeys(zip(ordered["dim"], ordered["kind"])))
    colours = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(min(14.0, 4.0 + 0.035 * len(ordered)), 3.8), constrained_layout=True)
    position, any_over = 0, False
    for index, (dim, kind) in enumerate(groups):
        part = ordered[(ordered["dim"] == dim) & (ordered["kind"] == kind)]
        xs = np.arange(position, position + len(part))
        heights = part["utilization"].to_numpy()
        ax.bar(xs, heights, width=1.0, color=colours(index % 10),
               label=f"dim {dim} {kind} ({len(part)} links)", edgecolor="none")
        over = heights > 1.0
        if over.any():
            ax.bar(xs[over], heights[over], width=1.0, color="none", edgecolor=OVER, linewidth=0.5, hatch="//",
                   label=None if any_over else "above 1 (hatched)")
            any_over = True
        position += len(part) + max(1, len(ordered) // 60)  # a gap between groups
    if ordered["utilization"].max() > 1.0:
        ax.axhline(1.0, color=OVER, linestyle="--", linewidth=1, label="capacity (utilization 1)")
    ax.set_xlabel("links, grouped by dimension (level) and kind")
    ax.set_xticks([])
    ax.set_ylabel("utilization (busy / simulated time)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(title, fontsize=10)
    return fig


def timeseries(plt, links: pd.DataFrame, series: pd.DataFrame, title: str):
    """Utilization per sampling interval: the min-max band and the median over all links, and the
    busiest links whose curves differ (a link whose curve another drawn one already shows is
    counted in that one's legend entry instead of hiding under it)."""
    util = report.interval_utilization(series)
    unit, scale = time_unit(float(util["time_ns"].max()))
    per_interval = util.groupby(["start_ns", "time_ns"])["utilization"]
    edges = np.append(per_interval.min().index.get_level_values("start_ns"), util["time_ns"].max()) / scale
    fig, ax = plt.subplots(figsize=(7.5, 3.8), constrained_layout=True)
    ax.stairs(per_interval.max().to_numpy(), edges, baseline=per_interval.min().to_numpy(), fill=True,
              color="0.85", label=f"all {util['link_id'].nunique()} links: min to max")
    ax.stairs(per_interval.median().to_numpy(), edges, color="0.45", linewidth=1, label="median link")
    curves = util.pivot(index="start_ns", columns="link_id", values="utilization").round(6)
    alike = curves.T.groupby(list(curves.index), sort=False).groups  # identical curves -> their link ids
    drawn = 0
    for row in report.busiest_links(links, len(links)).itertuples():
        if drawn == BUSIEST_SHOWN:
            break
        twins = next((ids for ids in alike.values() if row.link_id in ids), [row.link_id])
        if row.link_id != min(twins, key=lambda i: (-links.loc[i, "utilization"], i)):
            continue  # drawn with the first of its twins
        more = f" and {len(twins) - 1} alike" if len(twins) > 1 else ""
        ax.stairs(curves[row.link_id].to_numpy(), edges, linestyle=("-", "--", ":")[drawn], linewidth=1.5,
                  label=f"link {row.src}->{row.dst} (dim {row.dim}){more}")
        drawn += 1
    if util["utilization"].max() > 1.0:
        ax.axhline(1.0, color=OVER, linestyle="--", linewidth=1, label="capacity (utilization 1)")
    ax.set_xlabel(f"simulated time ({unit})")
    ax.set_ylabel("utilization (busy / interval)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(title, fontsize=10)
    return fig


def latency_cdf(plt, latency: pd.DataFrame, title: str, cycle_ns: float | None):
    """The packet-latency CDF (from the histogram), p50 and p99 marked; in time when the clock is known."""
    ordered = latency.sort_values("latency_cycles")
    values = ordered["latency_cycles"].to_numpy(dtype=float)
    fraction = ordered["packets"].cumsum().to_numpy() / ordered["packets"].sum()
    if cycle_ns:
        unit, scale = time_unit(float(values.max()) * cycle_ns)
        values = values * cycle_ns / scale
    else:
        unit = "cycles"
    fig, ax = plt.subplots(figsize=(6.5, 3.8), constrained_layout=True)
    ax.step(np.append(values[0], values), np.append(0.0, fraction), where="post",
            label=f"CDF of {int(ordered['packets'].sum()):,} packets")
    for q, style in ((0.5, "--"), (0.99, ":")):
        at = values[np.searchsorted(fraction, q - 1e-12)]
        ax.axvline(at, color="0.3", linestyle=style, linewidth=1, label=f"p{round(q * 100)} = {at:.4g} {unit}")
    label = f"packet latency ({unit})"
    ax.set_xlabel(label)
    ax.set_ylabel("packets at or below (fraction)")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title, fontsize=10)
    return fig


def latency_vs_load(plt, sweep: pd.DataFrame, title: str, saturation: float | None, cycle_ns: float | None):
    """Left: average packet latency against offered load (in time when the clock is known),
    saturated loads crossed and the saturation load marked; right: accepted against offered load,
    beside the line where they are equal."""
    from matplotlib.ticker import FuncFormatter

    ordered = sweep.sort_values("offered_load")
    saturated = ordered["saturated"].astype(bool).to_numpy()
    latency = ordered["avg_packet_latency_cycles"].to_numpy(dtype=float)
    unit, scale = time_unit(float(latency.max()) * cycle_ns) if cycle_ns else ("cycles", 1.0)
    latency = latency * (cycle_ns or 1.0) / scale
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    left.plot(ordered["offered_load"], latency, marker="o", label="average latency")
    if saturated.any():
        left.plot(ordered["offered_load"][saturated], latency[saturated], "x", color=OVER, markersize=9,
                  label="saturated")
    for ax in (left, right) if saturation else ():
        ax.axvline(saturation, color="0.3", linestyle="--", label=f"saturation load {saturation:.3g}")
    left.set_yscale("log")
    plain = FuncFormatter(lambda value, _position: f"{value:g}")
    left.yaxis.set_major_formatter(plain)
    left.yaxis.set_minor_formatter(plain)
    left.tick_params(axis="y", which="minor", labelsize=7)
    left.set_xlabel("offered load (flits/node/cycle)")
    left.set_ylabel(f"average packet latency ({unit})")
    left.legend(fontsize=8)
    top = float(max(ordered["offered_load"].max(), ordered["accepted_load"].max()))
    right.plot([0, top], [0, top], color="0.6", linestyle=":", label="accepted = offered")
    right.plot(ordered["offered_load"], ordered["accepted_load"], marker="o", label="accepted load")
    right.set_xlabel("offered load (flits/node/cycle)")
    right.set_ylabel("accepted load (flits/node/cycle)")
    right.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig


def numeric_axis(values: pd.Series) -> tuple[np.ndarray | None, str]:
    """Values of a varied parameter as numbers (sizes like '64MiB' as bytes), and the axis note
    ('bytes' for sizes); (None, '') when they are not all numbers."""
    try:
        return values.astype(float).to_numpy(), ""
    except (TypeError, ValueError):
        pass
    try:
        return np.array([parse_size(v) for v in values], dtype=float), " (bytes)"
    except UnitError:
        return None, ""


def metric_label(metric: str, largest: float) -> tuple[str, float]:
    """(axis label with its unit, divisor) for a results column, from its name's unit suffix."""
    if metric.endswith("_ns"):
        unit, scale = time_unit(largest)
        return f"{metric[:-3].replace('_', ' ')} ({unit})", scale
    for suffix, unit in (("_GBps", "GB/s"), ("_cycles", "cycles"), ("_load", "flits/node/cycle")):
        if metric.endswith(suffix):
            return f"{metric[: -len(suffix)].replace('_', ' ') if suffix != '_load' else metric.replace('_', ' ')} " \
                   f"({unit})", 1.0
    return metric.replace("_", " "), 1.0


LOG_Y_SPAN = 30  # a study's values spanning this factor or more are shown on a log scale (else the
# smaller lines lie flat along the axis: an all-to-all 50x faster than the all-reduce beside it)


def powers_of_two(xs: np.ndarray) -> bool:
    """Are the values three or more distinct powers of two (a doubling sweep, shown on a log-2 axis)?"""
    values = set(xs.tolist())
    return len(values) >= 3 and all(v > 0 and float(v).is_integer() and (int(v) & (int(v) - 1)) == 0
                                    for v in values)


def study_plot(plt, frame: pd.DataFrame, varied: list[str], metric: str, title: str):
    """A study's `metric` against a varied parameter, one line (and legend entry) per combination of
    the others; failed points are left out."""
    ok = frame[frame["status"] == "ok"]
    # x: the numeric parameter (numbers, or sizes such as '64MiB') with the most values, else the first
    numeric = [key for key in varied if numeric_axis(ok[key])[0] is not None]
    x_key = max(numeric, key=lambda key: ok[key].nunique()) if numeric else varied[0] if varied else "point"
    others = [key for key in varied if key != x_key]
    label, scale = metric_label(metric, float(ok[metric].abs().max() or 1.0))
    fig, ax = plt.subplots(figsize=(7.5, 4.2), constrained_layout=True)
    groups = ok.groupby(others, sort=False) if others else [((), ok)]
    markers, styles = "osD^vP*X", ("-", "--", ":", "-.")
    for index, (key, part) in enumerate(groups):
        key = key if isinstance(key, tuple) else (key,)
        xs, note = numeric_axis(part[x_key])
        if xs is None:
            categories = list(dict.fromkeys(ok[x_key].astype(str)))
            xs = np.array([categories.index(v) for v in part[x_key].astype(str)], dtype=float)
            ax.set_xticks(range(len(categories)), categories, rotation=30, fontsize=8)
        elif note:  # sizes: ticks at the values swept, written as sizes
            ax.set_xscale("log", base=2)
            ticks = sorted(set(xs))
            ax.set_xticks(ticks, [format_size(t) for t in ticks], fontsize=8)
            ax.minorticks_off()
        elif powers_of_two(xs):  # (buffer depths, VCs, ...): doubling steps evenly spaced, ticks at the values
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted(set(xs)), [f"{t:g}" for t in sorted(set(xs))])
            ax.minorticks_off()
        elif xs.min() > 0 and xs.max() / xs.min() >= 100:
            ax.set_xscale("log")
        order = np.argsort(xs, kind="stable")
        name = ", ".join(str(v) if len(others) == 1 else f"{k}={v}" for k, v in zip(others, key)) or metric
        ax.plot(xs[order], part[metric].to_numpy()[order] / scale, marker=markers[index % len(markers)],
                linestyle=styles[index % len(styles)], label=name)
    values = ok[metric].to_numpy(dtype=float)
    if values.min() > 0 and values.max() / values.min() >= LOG_Y_SPAN:
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:g}"))
    ax.set_xlabel(f"{x_key}{note}" if varied else "point")
    ax.set_ylabel(label)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), title=", ".join(others) or None)
    ax.set_title(title, fontsize=10)
    return fig


def save(plt, figure, path: Path) -> Path:
    """Write `figure` as a PNG at `path`, whole or not at all (netsim.files)."""
    try:
        with whole_file(path, binary=True, what="the plot") as out:
            figure.savefig(out, dpi=120, format="png")
    finally:
        plt.close(figure)
    return path


def write_plots(out_dir: Path, summary: dict, tables: dict[str, pd.DataFrame]) -> list[Path]:
    """Every plot the folder's tables allow; returns the files written."""
    plt = pyplot()
    name = summary.get("name", out_dir.name)
    cycle_ns = summary.get("cycle_ns")
    figures = {}
    links = tables.get("links")
    if links is not None and len(links):
        sizes = torus_sizes(summary)
        if sizes:
            figures["links_heatmap"] = heatmap(plt, links, sizes, f"link utilization: {name}")
        else:
            figures["links_bar"] = bars(plt, links, f"link utilization: {name}")
        series = tables.get("link_timeseries")
        if series is not None and series["time_ns"].nunique() > 2:
            figures["link_timeseries"] = timeseries(plt, links, series, f"link utilization over time: {name}")
    latency = tables.get("packet_latency")
    if latency is not None and len(latency):
        figures["packet_latency"] = latency_cdf(plt, latency, f"packet latency: {name}", cycle_ns)
    if "sweep" in tables and len(tables["sweep"]):
        figures["latency_vs_load"] = latency_vs_load(plt, tables["sweep"], f"latency vs load: {name}",
                                                     summary.get("saturation_load"), cycle_ns)
    return [save(plt, figure, out_dir / f"{stem}.png") for stem, figure in figures.items()]


def write_study_plot(frame: pd.DataFrame, varied: list[str], metric: str, path: Path) -> Path:
    """A sweep's results plot (study_plot) at `path`."""
    plt = pyplot()
    study = path.name.removesuffix(".results.png")
    quantity = metric_label(metric, 1.0)[0].rsplit(" (", 1)[0]
    return save(plt, study_plot(plt, frame, varied, metric, f"study {study}: {quantity}"), path)
