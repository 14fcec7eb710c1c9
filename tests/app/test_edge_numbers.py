"""Numbers at the edge of the physical range (issue 28, item 4): a bandwidth, latency or clock that
would overflow a run's arithmetic, or put its events past any horizon, and a compute node's NaN or
infinite duration, are refused at load time in one line (exit 2) instead of running to a wrong
answer or stopping as if deadlocked."""

import math

import pytest

from netsim.app.cli import main
from tests.helpers import chakra_node, write_traces


@pytest.mark.parametrize("setting, expected", [
    ("topology.bandwidth=1e-300", "key 'topology.bandwidth': expected a link bandwidth from 1e-06 to 1e+12 GB/s "
                                  "(1 kB/s to 1 ZB/s), got 1e-300"),
    ("topology.bandwidth=1e300", "expected a link bandwidth from 1e-06 to 1e+12 GB/s"),
    ("topology.latency=1e308", "key 'topology.latency': expected a time like '500ns', '1.5us', '3cycles' or a "
                               "number of ns, got 1e+308 (beyond 1e+15 ns, about 11.6 days)"),
    ("garnet.clock_ghz=1e300", "key 'garnet.clock_ghz': expected a clock between 0.001 and 1000 GHz, got 1e+300"),
    ("garnet.router_latency=1e300", "key 'garnet.router_latency': expected a whole number of cycles like "
                                    "'3cycles' or a time like '2ns', got 1e+300 (beyond 1e+15 cycles)"),
])
def test_a_value_past_the_physical_range_is_refused_at_load_time(capsys, setting, expected):
    status = main(["collective", "all-reduce", "--size", "1KiB", "--network", "ring-8", "--backend", "garnet",
                   "--set", setting, "--quiet"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and expected in err, err


@pytest.mark.parametrize("duration", [math.nan, math.inf, 1e300])
def test_a_compute_node_of_nan_or_endless_duration_is_refused(tmp_path, capsys, duration):
    node = chakra_node(0, "COMP", duration_ns=("double_val", duration))
    prefix = write_traces(tmp_path, [[node], [node]])
    status = main(["run", "--workload", str(prefix), "--network", "ring-8", "--set", "topology.dims=[2]",
                   "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert "attribute 'duration_ns': expected a finite time from 0 to 1e+15 ns (about 11.6 days)" in err, err
