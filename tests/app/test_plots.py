"""The plots, read back through matplotlib's objects: labelled axes with units, a legend entry for
every series, no title over another, time in ns/us/ms, and utilization above 1 marked."""

import re

import pytest

from netsim.app.cli import main
from netsim.network_config import load_network
from netsim.app.outputs import load_output, write_outputs
from netsim.app.runner import run_collective, run_training
from system import load_system
from workload import load_workload

plt = pytest.importorskip("matplotlib.pyplot")
from netsim.app import plots  # noqa: E402  (after the importorskip: plots needs matplotlib)

UNIT = re.compile(r"\((ns|us|ms|s|cycles|flits/node/cycle|bytes|GB/s|busy / simulated time|busy / interval"
                  r"|fraction)\)")


def folder(tmp_path, result):
    """A run written out and read back, as `netsim report` sees it."""
    out = write_outputs(result.summary, result.tables, tmp_path / result.name)
    return load_output(out)


def drawn_axes(figure):
    """The panels of a figure (not colour bars, not panels left empty)."""
    return [ax for ax in figure.axes if ax.get_label() != "<colorbar>" and ax.axison
            and (ax.lines or ax.images or ax.patches or ax.collections)]


def check_figure(figure, series_at_least: int = 0, units: str = "xy"):
    """Every panel's axes labelled, with a unit on the quantity axes (`units`; a heat map's axes are
    coordinates, its colour bar the quantity); titles apart; each legend's entries distinct."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    for ax in drawn_axes(figure):
        if ax.images:  # a heat map: coordinates on the axes, the quantity on the colour bar
            assert ax.get_xlabel()
            continue
        for axis in units:
            label = ax.get_xlabel() if axis == "x" else ax.get_ylabel()
            assert UNIT.search(label), f"{axis} axis without unit: {label!r}"
    for bar in (ax for ax in figure.axes if ax.get_label() == "<colorbar>"):
        assert UNIT.search(bar.get_xlabel() + bar.get_ylabel())
    boxes = [text.get_window_extent(renderer) for text in
             [figure._suptitle] + [ax.title for ax in figure.axes] if text is not None and text.get_text()]
    for i, first in enumerate(boxes):
        for second in boxes[i + 1:]:
            assert not first.overlaps(second), "two titles overlap"
    legends = [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None]
    for legend in legends:  # each legend tells its series apart
        texts = [text.get_text() for text in legend.get_texts()]
        assert len(set(texts)) == len(texts), texts
    entries = [text.get_text() for legend in legends for text in legend.get_texts()]
    assert len(entries) >= series_at_least
    return entries


def test_torus_heat_map_has_coordinates_directions_and_marks_links_above_one(tmp_path):
    summary, tables = folder(tmp_path, run_collective(
        load_network("ring-16"), load_system("default", [(["all-reduce-implementation"], "direct")]), "all-reduce",
        64 * 2**20))
    figure = plots.heatmap(plt, tables["links"], plots.torus_sizes(summary), "t")
    check_figure(figure)
    titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
    assert titles == ["dim 0, + direction", "dim 0, - direction"]
    panels = [ax for ax in figure.axes if ax.images]
    assert all("dim 0 coordinate" in ax.get_xlabel() for ax in panels)
    assert [t.get_text() for t in panels[0].get_xticklabels()] == [str(x) for x in range(16)]
    over = sum(1 for ax in panels for patch in ax.patches if patch.get_edgecolor()[:3] == (0.8392156862745098,
                                                                                           0.15294117647058825,
                                                                                           0.1568627450980392))
    assert over == 32  # every link of the ring is above 1, each outlined
    assert "above 1" in figure.axes[-1].get_xlabel() + figure.axes[-1].get_ylabel()  # the colour bar says so
    plt.close(figure)


def test_three_dimensional_torus_heat_map_shows_every_slice(tmp_path):
    summary, tables = folder(tmp_path, run_collective(load_network("torus-2x4x4", backend="garnet"),
                                                      load_system("default"), "all-reduce", 256 * 1024))
    figure = plots.heatmap(plt, tables["links"], plots.torus_sizes(summary), "t")
    check_figure(figure)
    titles = sorted(ax.get_title() for ax in figure.axes if ax.images)
    assert titles == ["dim 0, + direction", "dim 1, + direction", "dim 1, - direction", "dim 2, + direction",
                      "dim 2, - direction"]
    tops = [child for ax in figure.axes for child in ax.child_axes
            if child.get_xticklabels() and child.get_xticklabels()[0].get_text() == "z = 0"]
    assert len(tops) == 5 and [t.get_text() for t in tops[0].get_xticklabels()] == [f"z = {z}" for z in range(4)]
    plt.close(figure)


def test_link_bars_are_grouped_by_dimension_with_a_legend_readable_at_256_links(tmp_path):
    summary, tables = folder(tmp_path, run_collective(
        load_network("fat-tree-32"), load_system("default", [(["all-to-all-implementation"], "direct")]),
        "all-to-all", 2**20))
    links = tables["links"]
    assert len(links) == 128 and links["utilization"].max() > 1
    figure = plots.bars(plt, links, "t")
    entries = check_figure(figure, series_at_least=3, units="y")  # x: the links themselves
    assert {"dim 0 npu-switch (32 links)", "dim 0 switch-npu (32 links)", "dim 0 switch-switch (64 links)"} <= \
        set(entries)
    assert "capacity (utilization 1)" in entries and "above 1 (hatched)" in entries
    assert figure.get_size_inches()[0] <= 14
    plt.close(figure)


def test_time_series_shows_a_band_and_distinct_busiest_links_in_time_units(tmp_path):
    summary, tables = folder(tmp_path, run_training(load_network("torus-4x4"), load_system("default"),
                                                    load_workload("Resnet50_DataParallel")))
    figure = plots.timeseries(plt, tables["links"], tables["link_timeseries"], "t")
    entries = check_figure(figure, series_at_least=4)
    (ax,) = drawn_axes(figure)
    assert ax.get_xlabel() == "simulated time (ms)"
    assert entries[:2] == ["all 64 links: min to max", "median link"]
    assert len(entries) >= 3 and all("->" in e for e in entries[2:])
    plt.close(figure)


def test_packet_latency_is_a_cdf_with_p50_and_p99_in_time(tmp_path):
    summary, tables = folder(tmp_path, run_collective(load_network("torus-4x4", backend="garnet"),
                                                      load_system("default"), "all-reduce", 2**20))
    figure = plots.latency_cdf(plt, tables["packet_latency"], "t", summary["cycle_ns"])
    entries = check_figure(figure, series_at_least=3)
    (ax,) = drawn_axes(figure)
    assert ax.get_xlabel() in ("packet latency (ns)", "packet latency (us)")  # 20 ns cycles shown as time
    assert entries[0].startswith("CDF of") and entries[1].startswith("p50 = ") and entries[2].startswith("p99 = ")
    cdf = ax.lines[0].get_ydata()
    assert cdf[0] == 0 and cdf[-1] == pytest.approx(1.0) and (cdf[1:] >= cdf[:-1]).all()
    plt.close(figure)


def test_latency_against_load_marks_saturation_beside_accepted_load():
    import pandas as pd

    sweep = pd.DataFrame({"offered_load": [0.1, 0.2, 0.3, 0.35], "accepted_load": [0.1, 0.2, 0.29, 0.3],
                          "avg_packet_latency_cycles": [20.0, 24.0, 60.0, 400.0],
                          "saturated": [False, False, True, True]})
    figure = plots.latency_vs_load(plt, sweep, "t", 0.2, cycle_ns=20.0)
    entries = check_figure(figure, series_at_least=5)
    left, right = drawn_axes(figure)
    assert left.get_ylabel() in ("average packet latency (ns)", "average packet latency (us)")
    assert right.get_ylabel() == "accepted load (flits/node/cycle)"
    assert entries.count("saturation load 0.2") == 2 and "saturated" in entries and "accepted = offered" in entries
    plt.close(figure)


def test_study_plot_puts_sizes_on_the_x_axis_and_a_line_per_algorithm():
    import pandas as pd

    frame = pd.DataFrame({"point": range(4), "status": "ok", "error": "", "algorithm": ["ring", "direct"] * 2,
                          "size": ["1KiB", "1KiB", "1MiB", "1MiB"],
                          "collective_time_ns": [1e4, 8e3, 2e6, 7e5]})
    figure = plots.study_plot(plt, frame, ["algorithm", "size"], "collective_time_ns", "t")
    entries = check_figure(figure, series_at_least=2)
    (ax,) = drawn_axes(figure)
    assert entries == ["ring", "direct"] and ax.get_xlabel() == "size (bytes)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1KiB", "1MiB"]
    assert ax.get_ylabel() == "collective time (ms)"
    plt.close(figure)


def test_every_plot_of_a_synth_run_is_written(tmp_path):
    """synth's summary has the topology and its folder packet_latency.csv: a heat map and a CDF, not
    a 256-bar chart without a latency plot."""
    from tests.app.test_cli import netsim

    out = tmp_path / "s"
    made = netsim("synth", "--network", "torus-8x8-noc", "--pattern", "uniform", "--rate", "0.2", "--cycles", "600",
                  "--out", str(out), "--quiet", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    shown = netsim("report", str(out), "--plot", "--quiet", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert {p.name for p in out.glob("*.png")} == {"links_heatmap.png", "link_timeseries.png", "packet_latency.png"}


def test_report_plot_into_a_folder_it_cannot_write_is_one_line(tmp_path, capsys):
    """A plot that cannot be written (here a folder where the PNG should go; a read-only folder
    alike) is one line and exit 2, not an OSError traceback (issue 28, item 7)."""
    out = tmp_path / "run"
    assert main(["collective", "all-reduce", "--size", "1KiB", "--network", "ring-8", "--out", str(out),
                 "--quiet"]) == 0
    for name in ("links_heatmap", "links_bar"):  # the first plot written, whichever the network gets
        (out / f"{name}.png").mkdir()
    capsys.readouterr()
    assert main(["report", str(out), "--plot"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{out}/links_" in err and ".png: cannot write the plot" in err, err


def test_study_plot_over_a_doubling_parameter_has_a_log_2_axis_with_the_values_as_ticks():
    """Buffer flits 4, 8, 16, 32 were spaced linearly, crowding the small values (issue 28, item 14);
    values that do not double keep a linear axis."""
    import pandas as pd

    flits = [4, 8, 16, 32]
    frame = pd.DataFrame({"point": range(4), "status": "ok", "error": "", "garnet.buffer_flits": flits,
                          "collective_time_ns": [4e4, 3e4, 2.5e4, 2.4e4]})
    figure = plots.study_plot(plt, frame, ["garnet.buffer_flits"], "collective_time_ns", "t")
    (ax,) = drawn_axes(figure)
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_xticklabels()] == ["4", "8", "16", "32"]
    plt.close(figure)
    figure = plots.study_plot(plt, frame.assign(**{"garnet.buffer_flits": [4, 6, 8, 10]}), ["garnet.buffer_flits"],
                              "collective_time_ns", "t")
    (ax,) = drawn_axes(figure)
    assert ax.get_xscale() == "linear"
    plt.close(figure)
