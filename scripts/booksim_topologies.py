"""Agreement with BookSim2 on its fat-tree, dragonfly, torus and mesh
(tests/data/booksim2/booksim2-topologies*.csv): the rows whose routing netsim models (`MODELLED`:
BookSim's routing function -> its topology and netsim's routing unit), each run in netsim with one
model setting per topology and routing, nothing tuned per row:

- all: BookSim's router (`garnet.allocator = "booksim"`, a 4-cycle pipeline), 16-byte flits at
  1 GHz, the row's VCs, buffer depth, packet size and VC release (`wait_for_tail_credit`), BookSim's
  traffic conventions (a source may pick itself; one cycle of injection delay);
- fat-tree: the 4-ary 3-tree, 1-cycle links, any VC on every hop; `nca` as up ports drawn at
  random per packet (`up_ports = "random"`), `anca` as `adaptive` (the up port with the most free
  credits; BookSim picks the better of two random ones);
- dragonfly: p = k, a = 2k, h = k (k = 2: 72 nodes), 10-cycle local and 100-cycle global links;
  `min` as `dragonfly-min` with 2 VCs on the router-to-router ports (BookSim's `min` uses VC 0
  before the global hop and VC 1 from it on, none other), the row's VC count at the NICs; `ugal`
  as `ugal` (BookSim's rule: through the intermediate node's router, its 3 phases one VC each);
- torus and mesh: 8x8, 1-cycle links, one NIC port per node; `dim_order` as `dor-booksim` (torus)
  and `dor` (mesh), `min_adapt` as `adaptive` (BookSim's escape and adaptive VCs and route set),
  `romm`, `valiant` and `xy_yx` as the units of those names.
Traffic: BookSim's `randperm` is netsim's `random-permutation` of seed 0 (BookSim's `perm_seed =
0`), so those rows run with seed 0, every other row with seed 1; `bitcomp` is `bit-complement`.

Metrics: zero-load latency (packet latency at the row's T0 rate, 0.005; within 2%), and the
saturation throughput: the load accepted when offered 1.0 flits/node/cycle, against BookSim's
(`overload_accepted`, its steady state at offered 1.0; within 10%); tests/scripts/test_booksim_topologies.py
checks both on every row.

    python scripts/booksim_topologies.py [--zero-load-only] [--only TEXT]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from netsim.config import Source
from netsim.network_config import parse_network_table
from netsim.app.traffic import run_synth

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "booksim2"
SUMMARY = pd.read_csv(DATA / "booksim2-topologies-summary.csv")
# BookSim routing function -> (its topology, netsim's routing unit)
MODELLED = {"nca_fattree": ("fattree", "dor"), "anca_fattree": ("fattree", "adaptive"),
            "min_dragonflynew": ("dragonflynew", "dragonfly-min"), "ugal_dragonflynew": ("dragonflynew", "ugal"),
            "dim_order_torus": ("torus", "dor-booksim"), "min_adapt_torus": ("torus", "adaptive"),
            "valiant_torus": ("torus", "valiant"),
            "dim_order_mesh": ("mesh", "dor"), "min_adapt_mesh": ("mesh", "adaptive"), "romm_mesh": ("mesh", "romm"),
            "valiant_mesh": ("mesh", "valiant"), "xy_yx_mesh": ("mesh", "xy-yx")}
PATTERNS = {"uniform": "uniform", "bad_dragon": "bad-dragon", "randperm": "random-permutation",
            "transpose": "transpose", "bitcomp": "bit-complement", "tornado": "tornado"}

LINK = {"bandwidth": "16GB/s", "latency": "1ns"}  # one 16-byte flit per 1 GHz cycle, 1-cycle links
TOPOLOGY = {
    "fattree": {"kind": "fat-tree", "levels": 3, "radix": 4, "up_ports": "random", **LINK},
    "dragonflynew": {"kind": "dragonfly", "local_latency": "10ns", "global_latency": "100ns", **LINK},  # + its shape
    "torus": {"kind": "torus", "dims": [8, 8], **LINK},
    "mesh": {"kind": "mesh", "dims": [8, 8], **LINK},
}
NIC_PORTS = {"torus": "single", "mesh": "single"}  # BookSim's one injection and one ejection channel per node
ROUTER_PORT_VCS = {"dragonfly-min": 2}  # VCs a routing function uses between routers, where fewer than num_vcs
# measured cycles at the T0 rate; a mesh's rows include permutations, whose mean path length is a
# sample of which sources happened to inject (+-0.1 hop, 1.5% of T0, over 20000 cycles)
ZERO_LOAD_CYCLES = {"fattree": 20000, "dragonflynew": 20000, "torus": 80000, "mesh": 80000}
OVERLOAD_CYCLES = {"fattree": 1500, "dragonflynew": 10000, "torus": 1500, "mesh": 1500}  # measured cycles at 1.0
# cycles of warm-up before them: a quarter as many, but on the dragonfly BookSim's own (warmup_periods 3 x its
# sample_period 10000), as UGAL's queues settle slowly at offered 1.0 (k = 3 bad_dragon ugal: 0.0383 accepted
# after 2500 cycles, 0.0334 after 30000; BookSim 0.0350)
OVERLOAD_WARMUP = {"dragonflynew": 30000}


def modelled_rows() -> pd.DataFrame:
    """The summary rows whose routing netsim models."""
    topology = SUMMARY.routing_function.map(lambda name: MODELLED.get(name, (None,))[0])
    return SUMMARY[topology == SUMMARY.topology]


def netsim_network(row):
    """BookSim's network of a summary row in netsim terms (see the module docstring)."""
    wait_for_tail_credit = row.variant != "wtc0b64"  # the variant's one change (and a 64-flit buffer)
    routing = MODELLED[row.routing_function][1]
    garnet = {"clock_ghz": 1.0, "flit_bytes": 16, "packet_bytes": 16 * int(row.packet_size_flits),
              "vcs": int(row.num_vcs), "buffer_flits": int(row.vc_buf_size), "router_latency": 4,
              "allocator": "booksim", "vc_release": "tail-credit" if wait_for_tail_credit else "tail-sent",
              "routing": routing}
    if routing in ROUTER_PORT_VCS:
        garnet["dim"] = {"0": {"vcs": ROUTER_PORT_VCS[routing]}}
    if row.topology in NIC_PORTS:
        garnet["nic_ports"] = NIC_PORTS[row.topology]
    topology = TOPOLOGY[row.topology]
    if row.topology == "dragonflynew":
        k = int(row.k)  # BookSim's dragonflynew of k: p = k NPUs, h = k global links a router, a = 2k routers a group
        topology = {**topology, "p": k, "a": 2 * k, "h": k}
    table = {"topology": topology, "backend": "garnet", "garnet": garnet}
    return parse_network_table(table, Source("booksim-topologies"), row.config_id)


def synth(row, rate: float, cycles: int, warmup: int | None = None) -> dict:
    """One netsim run of `row`'s network at `rate`: `cycles` measured after `warmup` (a quarter as many)."""
    seed = 0 if row.traffic == "randperm" else 1  # BookSim's randperm is netsim's random-permutation of seed 0
    return run_synth(netsim_network(row), PATTERNS[row.traffic], rate, int(row.packet_size_flits), cycles, seed,
                     warmup_cycles=cycles // 4 if warmup is None else warmup, include_source=True, injection_delay=1)


def zero_load_latency(row) -> float:
    return synth(row, float(row.T0_rate), ZERO_LOAD_CYCLES[row.topology])["avg_packet_latency_cycles"]


def saturation_accepted(row) -> float:
    return synth(row, 1.0, OVERLOAD_CYCLES[row.topology], OVERLOAD_WARMUP.get(row.topology))["accepted_load"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zero-load-only", action="store_true", help="skip the saturation runs (minutes)")
    parser.add_argument("--only", default="", help="rows whose config id contains TEXT")
    args = parser.parse_args(argv)
    for row in modelled_rows().itertuples():
        if args.only not in row.config_id:
            continue
        t0 = zero_load_latency(row)
        line = f"{row.config_id:40s} T0 {t0:8.2f} vs {row.T0:8.2f} ({t0 / row.T0 - 1:+.1%})"
        if not args.zero_load_only:
            accepted = saturation_accepted(row)
            line += (f"   accepted at 1.0 {accepted:.4f} vs {row.overload_accepted:.4f} "
                     f"({accepted / row.overload_accepted - 1:+.1%})")
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
