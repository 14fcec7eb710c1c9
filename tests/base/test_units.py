import pytest

from netsim.units import UnitError, parse_bandwidth, parse_cycles, parse_size, parse_time


@pytest.mark.parametrize("text, expected", [
    ("64MiB", 64 * 2**20), ("4KiB", 4096), ("1GB", 10**9), ("1.5KiB", 1536), (4096, 4096), ("100 B", 100),
])
def test_sizes(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("100GB/s", 100.0), ("400Gbps", 50.0), ("400Gb/s", 50.0), ("1TB/s", 1000.0), (25, 25.0),
    ("1GiB/s", 2**30 / 1e9),
])
def test_bandwidths(text, expected):
    assert parse_bandwidth(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, expected", [("500ns", 500.0), ("1.5us", 1500.0), ("2ms", 2e6), (7, 7.0), ("100ps", 0.1)])
def test_times(text, expected):
    assert parse_time(text) == pytest.approx(expected)


def test_cycles_need_a_clock_and_convert_with_it():
    assert parse_time("3cycles", clock_ghz=2.0) == 1.5
    assert parse_cycles("3cycles", 1.0) == 3
    assert parse_cycles("2.5ns", 2.0) == 5
    with pytest.raises(UnitError, match="cycles need a clock"):
        parse_time("3cycles")


@pytest.mark.parametrize("parser, bad", [
    (parse_size, "64MB/s"), (parse_size, "1.5B"), (parse_size, "-1KiB"), (parse_size, True),
    (parse_bandwidth, "100GB"), (parse_bandwidth, 0), (parse_time, "5 parsecs"), (parse_time, "-1ns"),
])
def test_bad_values_say_what_was_expected(parser, bad):
    with pytest.raises(UnitError, match="expected"):
        parser(bad)
