"""Agreement with BookSim2 on its own ground (tests/data/booksim2: an 8x8 torus, uniform random
traffic, 4-stage routers, iSLIP allocators, tail-credit release, 2 or 4 VCs, 4- or 16-flit buffers,
1-, 4- or 16-flit packets). One model setting for every row, nothing tuned per row:
`garnet.allocator = "booksim"`, `garnet.routing = "dor-booksim"`, one NIC port per node, and
BookSim's traffic conventions (a source may pick itself, one cycle of injection delay).

Per configuration: zero-load latency within 1%; latency within 10% at the row nearest half of
saturation (BookSim's load where latency reaches 3x zero-load); saturation throughput (the load
accepted when offered well past saturation) within 10% of BookSim's highest accepted load."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from netsim.app.traffic import run_synth
from tests.helpers import network_config

DATA = Path(__file__).parents[1] / "data" / "booksim2"
ROWS = pd.read_csv(DATA / "booksim2-8x8-uniform.csv")
SUMMARY = pd.read_csv(DATA / "booksim2-8x8-uniform-summary.csv")
CONFIGS = [tuple(int(v) for v in row) for row in SUMMARY[["num_vcs", "vc_buf_flits", "packet_flits"]].values]


def booksim_noc(vcs: int, buffer_flits: int, packet_flits: int):
    """BookSim's 8x8 torus in netsim terms (see tests/data/booksim2/README.md)."""
    topology = {"kind": "torus", "dims": [8, 8], "bandwidth": "16GB/s", "latency": "1ns"}
    return network_config(topology, clock_ghz=1.0, flit_bytes=16, packet_bytes=16 * packet_flits, vcs=vcs,
                          buffer_flits=buffer_flits, router_latency=4, allocator="booksim", routing="dor-booksim",
                          nic_ports="single", vc_release="tail-credit")


def synth(config, rate: float, packet_flits: int, cycles: int) -> dict:
    return run_synth(config, "uniform", rate, packet_flits, cycles, 1, warmup_cycles=cycles // 4,
                     include_source=True, injection_delay=1)


def rows_of(vcs: int, buffer_flits: int, packet_flits: int) -> pd.DataFrame:
    return ROWS[(ROWS.num_vcs == vcs) & (ROWS.vc_buf_flits == buffer_flits) & (ROWS.packet_flits == packet_flits)]


def summary(vcs: int, buffer_flits: int, packet_flits: int) -> pd.Series:
    match = SUMMARY[(SUMMARY.num_vcs == vcs) & (SUMMARY.vc_buf_flits == buffer_flits)
                    & (SUMMARY.packet_flits == packet_flits)]
    return match.iloc[0]


@pytest.mark.parametrize("vcs, buffer_flits, packet_flits", CONFIGS)
def test_zero_load_latency_within_one_percent(vcs, buffer_flits, packet_flits):
    reference = summary(vcs, buffer_flits, packet_flits)
    result = synth(booksim_noc(vcs, buffer_flits, packet_flits), 0.005, packet_flits, 4000 * packet_flits + 16000)
    assert result["avg_packet_latency_cycles"] == pytest.approx(reference.zero_load_latency_cycles, rel=0.01)


@pytest.mark.parametrize("vcs, buffer_flits, packet_flits", CONFIGS)
def test_latency_at_half_saturation_within_ten_percent(vcs, buffer_flits, packet_flits):
    reference = summary(vcs, buffer_flits, packet_flits)
    rows = rows_of(vcs, buffer_flits, packet_flits)
    half = reference.saturation_at_3x_zero_load_offered / 2
    row = rows.loc[(rows.offered_flits_per_node_cycle - half).abs().idxmin()]
    result = synth(booksim_noc(vcs, buffer_flits, packet_flits), row.offered_flits_per_node_cycle, packet_flits, 3000)
    assert result["avg_packet_latency_cycles"] == pytest.approx(row.avg_packet_latency_cycles, rel=0.10)


@pytest.mark.parametrize("vcs, buffer_flits, packet_flits", CONFIGS)
def test_saturation_throughput_within_ten_percent(vcs, buffer_flits, packet_flits):
    rows = rows_of(vcs, buffer_flits, packet_flits)
    row = rows.loc[rows.offered_flits_per_node_cycle.idxmax()]
    assert row.saturated == "yes"
    result = synth(booksim_noc(vcs, buffer_flits, packet_flits), row.offered_flits_per_node_cycle, packet_flits, 2000)
    assert result["accepted_load"] == pytest.approx(row.accepted_flits_per_node_cycle, rel=0.10)
