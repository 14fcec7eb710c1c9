"""links.csv's contract, link_timeseries.csv, `netsim report` and its plots."""

import math

import pandas as pd
import pytest

from netsim.api import LINK_COLUMNS
from netsim.app import report, timeseries
from netsim.backends import create_network
from netsim.network_config import load_network
from netsim.app.progress import RunMonitor
from netsim.app.outputs import write_outputs
from netsim.app.runner import run_collective
from system import load_system
from tests.app.test_cli import netsim

BACKENDS = ("analytical", "garnet")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("network_name", ["torus-4x4", "switch-16"])
def test_link_bytes_add_up_to_bytes_sent_times_hops(backend, network_name):
    config = load_network(network_name, backend=backend)
    network = create_network(backend, config.build_topology(), config=config)
    topology = network.topology
    pairs = [(0, 5, 3000), (3, 12, 100), (7, 1, 4096), (15, 0, 1), (2, 3, 777)]
    for src, dst, nbytes in pairs:
        network.endpoint(src).send(dst, nbytes, tag=src)
        network.endpoint(dst).recv(src, nbytes, tag=src)
    network.run()
    links = network.link_stats()
    assert set(LINK_COLUMNS) <= set(links.columns)
    assert list(links["link_id"]) == list(range(len(topology.links)))
    assert links["bytes"].sum() == sum(nbytes * topology.hops(src, dst) for src, dst, nbytes in pairs)
    for src, dst, nbytes in pairs:  # every link on one of its minimal routes carried the message
        ties = topology.tie_dims(src, dst)
        routes = {topology.route(src, dst, choice) for choice in range(ties + 1) if choice & ties == choice}
        assert any(all(links.loc[topology.link(u, v).id, "bytes"] >= nbytes for u, v in zip(path, path[1:]))
                   for path in routes)
    if backend == "analytical":
        assert links["flits"].isna().all() and links["credit_stall_time_ns"].isna().all()
    else:
        # each flit carries flit_bytes, the last of a packet maybe fewer
        assert (links["flits"] * network.flit_bytes >= links["bytes"]).all() and links["flits"].sum() > 0
        assert not links["mean_buffer_flits"].isna().any()
        assert links["busy_time_ns"].sum() > 0


def collective(backend, tmp_path, network="torus-4x4", size=64 * 1024):
    result = run_collective(load_network(network, backend=backend), load_system("default"), "all-reduce", size,
                            monitor=RunMonitor())
    out = write_outputs(result.summary, result.tables, tmp_path / backend)
    return result, out


@pytest.mark.parametrize("backend", BACKENDS)
def test_timeseries_ends_at_the_link_totals(backend, tmp_path):
    result, out = collective(backend, tmp_path)
    series = pd.read_csv(out / "link_timeseries.csv")
    links = pd.read_csv(out / "links.csv")
    last = series[series["time_ns"] == series["time_ns"].max()].sort_values("link_id")
    assert last["time_ns"].iloc[0] == pytest.approx(result.summary["simulated_time_ns"])
    assert list(last["bytes"]) == list(links["bytes"])
    assert series.groupby("link_id")["bytes"].apply(lambda b: b.is_monotonic_increasing).all()
    util = report.interval_utilization(series)
    assert not util.empty and (util["utilization"] >= 0).all() and util["utilization"].max() > 0
    if backend == "garnet":  # a link serializes at most one flit at a time
        assert util["utilization"].max() <= 1.0 + 1e-9
        assert (out / "packet_latency.csv").is_file()


def test_timeseries_is_deterministic(tmp_path):
    first = collective("garnet", tmp_path / "a")[1]
    second = collective("garnet", tmp_path / "b")[1]
    assert (first / "link_timeseries.csv").read_text() == (second / "link_timeseries.csv").read_text()


class CountingNetwork:
    """A stand-in network for the sampler: `links` links whose counters grow with simulated time."""

    def __init__(self, links: int):
        self.links = links
        self.env = type("Env", (), {"now": 0.0})()
        self.next_counter_read = 0.0
        self.counters_any_time = False

    def link_counters(self):
        now = self.env.now
        return [link * now for link in range(self.links)], [now / (link + 1) for link in range(self.links)]


@pytest.mark.parametrize("links, keep", [(100, 50), (30_000, 16), (200_000, timeseries.MIN_KEEP)])
def test_sampler_keeps_fewer_samples_on_large_networks_and_one_row_per_sample_and_link(links, keep):
    network, sampler = CountingNetwork(links), timeseries.LinkSampler()
    for step in range(1000):
        network.env.now = 10.0 * step
        sampler.maybe_sample(network)
    sampler.sample(network)
    assert sampler.keep == keep and keep <= len(sampler.samples) <= 2 * keep
    frame = sampler.frame()
    assert len(frame) == links * len(sampler.samples)
    assert len(frame) <= max(timeseries.ROW_BUDGET, 2 * timeseries.MIN_KEEP * links)
    rows = [(t, link, b, busy) for t, link_bytes, busy_ns in sampler.samples
            for link, (b, busy) in enumerate(zip(link_bytes, busy_ns))]
    assert frame.to_records(index=False).tolist() == rows
    assert frame["time_ns"].iloc[-1] == network.env.now


def test_report_tables():
    links = pd.DataFrame({"link_id": [0, 1, 2, 3], "src": [0, 1, 2, 3], "dst": [1, 2, 3, 0], "kind": ["npu-npu"] * 4,
                          "dim": [0, 0, 1, 1], "bytes": [10, 30, 0, 20], "utilization": [0.1, 0.3, 0.0, 0.2],
                          "credit_stall_time_ns": [0.0, 5.0, 0.0, 9.0], "mean_buffer_flits": [0.1, 1.0, 0.0, 2.0],
                          "max_vc_flits": [1, 4, 0, 4]})
    dims = report.per_dimension_utilization(links).set_index("dim")
    assert dims.loc[0, "mean_utilization"] == pytest.approx(0.2) and dims.loc[0, "imbalance"] == pytest.approx(1.5)
    assert dims.loc[1, "max_utilization"] == pytest.approx(0.2) and dims.loc[1, "bytes"] == 20
    assert list(report.busiest_links(links, 2)["link_id"]) == [1, 3]
    assert list(report.congested_ports(links, 2)["link_id"]) == [3, 1]
    links["credit_stall_time_ns"] = math.nan
    assert report.congested_ports(links).empty


def test_report_command_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    for network, backend in (("torus-2x4x4", "garnet"), ("dgx-8x4", "analytical")):
        out = tmp_path / network
        run = netsim("collective", "all-to-all", "--size", "32KiB", "--network", network, "--backend", backend,
                     "--out", str(out), "--quiet", cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        shown = netsim("report", str(out), "--plot", "--top", "3", cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert "link utilization per dimension" in shown.stdout and "top 3 links" in shown.stdout
        plots = {path.name for path in out.glob("*.png")}
        if backend == "garnet":
            assert "top 3 congested input ports" in shown.stdout
            assert plots == {"links_heatmap.png", "link_timeseries.png", "packet_latency.png"}
        else:
            assert "models no buffers" in shown.stdout
            assert plots == {"links_bar.png", "link_timeseries.png"}
        for path in out.glob("*.png"):
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    import builtins

    from netsim.app import plots
    from netsim.errors import ConfigError

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ConfigError, match=r"pip install 'netsim\[plot\]'"):
        plots.pyplot()
