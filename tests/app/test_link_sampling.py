"""Link samples on the packet backend: no interval holds more busy time than it lasts, and a short
run gets the 50-100 samples README promises (issue 29, item 5)."""

import pytest

from netsim.network_config import load_network
from netsim.app.report import interval_utilization
from netsim.app.runner import run_collective
from system import load_system


@pytest.fixture(scope="module")
def direct_all_to_all():
    """A contended packet-backend run (every NPU sends to every other at once), whose busiest links
    are busy for whole sampling intervals."""
    network = load_network("torus-4x4", backend="garnet")
    system = load_system("default", [(["all-to-all-implementation"], "direct")])
    return run_collective(network, system, "all-to-all", 4 * 2**20)


def test_no_interval_is_busier_than_it_is_long(direct_all_to_all):
    series = direct_all_to_all.tables["link_timeseries"]
    util = interval_utilization(series)
    assert util["utilization"].max() <= 1.0 + 1e-9
    assert util["utilization"].max() > 0.99  # the busiest links are busy throughout some interval
    assert util["utilization"].min() >= 0.0  # counters never run backwards
    assert direct_all_to_all.summary["peak_interval_link_utilization"] <= 1.0 + 1e-9


def test_a_short_packet_run_gets_50_to_100_samples(direct_all_to_all):
    samples = direct_all_to_all.tables["link_timeseries"]["time_ns"].nunique()
    assert 50 <= samples <= 101  # (the last, at the end of the run, may come on top)


def test_busy_time_at_the_end_is_every_flit(direct_all_to_all):
    """Leaving out the busy time ahead of a sample changes nothing once the run is over."""
    links = direct_all_to_all.tables["links"]
    cycle_ns = direct_all_to_all.summary["cycle_ns"]
    assert (links["busy_time_ns"] == links["flits"] * links["cycles_per_flit"] * cycle_ns).all()


def test_the_peaks_are_the_same_from_plain_columns_and_from_frames(direct_all_to_all):
    """network_summary reads plain columns (synth) or DataFrames (the other commands): the busiest
    link over the run and over one interval are the same either way, and the interval peak is the
    highest of `interval_utilization`'s table (lowest link id, then earliest interval, among equals)."""
    from netsim.app.report import max_utilization, peak_interval_utilization

    links, series = direct_all_to_all.tables["links"], direct_all_to_all.tables["link_timeseries"]
    plain_links = {name: links[name].tolist() for name in links.columns}
    plain_series = {name: series[name].tolist() for name in series.columns}
    def comparable(answer):  # (NaN is not equal to itself)
        value, row = answer
        return value, {name: None if item != item else item for name, item in row.items()}

    assert comparable(max_utilization(plain_links)) == comparable(max_utilization(links))
    peak, row = peak_interval_utilization(plain_links, plain_series)
    assert comparable((peak, row)) == comparable(peak_interval_utilization(links, series))
    top = interval_utilization(series).sort_values(["utilization", "link_id", "time_ns"],
                                                   ascending=[False, True, True]).iloc[0]
    assert (peak, row["link_id"], row["time_ns"]) == (top["utilization"], top["link_id"], top["time_ns"])
    assert peak == direct_all_to_all.summary["peak_interval_link_utilization"] > 0
