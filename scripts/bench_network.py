"""Benchmark of the packet backend (issue 3's speed figures).

(a) 8x8 NoC torus (4 VCs, 4-flit buffers, 4-flit packets, 1-cycle links), uniform random traffic
    at 0.1 and 0.3 flits/node/cycle for 20,000 cycles;
(b) ring all-reduce of 64 MiB on the bundled 4x4x4 torus, written with raw endpoint sends and
    receives along the dimension-0 rings (reduce-scatter then all-gather, 2 x (4 - 1) steps).
Prints wall time, simulated cycles, flits delivered, router-to-router flit hops per wall second
and peak RSS. `--profile` prints the top of a cProfile of (a) at 0.3.

    python scripts/bench_network.py [--cycles 20000] [--size 64MiB] [--profile] [--skip-allreduce]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import time

from netsim.garnet.network import GarnetNetwork
from netsim.network_config import load_network
from netsim.traffic import run_synth
from netsim.units import parse_size


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def synthetic(cycles: int, rate: float) -> dict:
    config = load_network("torus-8x8-noc")
    result = run_synth(config, "uniform", rate, 4, cycles, seed=1)
    return {"scenario": f"(a) 8x8 torus uniform {rate}", "wall_s": result["wall_time_s"],
            "cycles": result["cycles"], "flits_delivered": result["flits"], "flit_hops": result["flit_hops"],
            "accepted_load": result["accepted_load"], "avg_latency_cycles": result["avg_packet_latency_cycles"]}


def ring_all_reduce(nbytes: int) -> dict:
    config = load_network("torus-4x4x4")
    topo = config.build_topology()
    net = GarnetNetwork(topo, config=config)
    env = net.env
    ring = topo.dims[0].size
    chunk = nbytes // ring

    def npu_process(npu: int):
        peers = topo.peers(npu, 0)
        me = peers.index(npu)
        nxt, prev = peers[(me + 1) % ring], peers[(me - 1) % ring]
        endpoint = net.endpoint(npu)
        for step in range(2 * (ring - 1)):
            endpoint.send(nxt, chunk, step)
            yield endpoint.recv(prev, chunk, step)

    for npu in range(topo.npus):
        env.process(npu_process(npu))
    started = time.perf_counter()
    net.run()
    wall = time.perf_counter() - started
    return {"scenario": f"(b) ring all-reduce {nbytes / 2**20:g} MiB on 4x4x4", "wall_s": wall,
            "cycles": net.clock.now_cycle(), "flits_delivered": sum(r.flits for r in net.receivers),
            "flit_hops": net.flit_hops(), "time_ns": env.now, "flit_bytes": net.flit_bytes,
            "packet_bytes": net.packet_bytes}


def show(row: dict) -> None:
    rate = row["flit_hops"] / row["wall_s"] if row["wall_s"] else 0.0
    extras = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
                       if k not in ("scenario", "wall_s", "cycles", "flits_delivered", "flit_hops"))
    print(f"{row['scenario']}: wall {row['wall_s']:.2f} s, {row['cycles']} cycles, "
          f"{row['flits_delivered']} flits delivered, {row['flit_hops']} flit hops, "
          f"{rate:,.0f} flit hops/s, peak RSS {peak_rss_mib():.0f} MiB; {extras}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20000)
    parser.add_argument("--size", default="64MiB")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--skip-allreduce", action="store_true")
    args = parser.parse_args()
    for rate in (0.1, 0.3):
        show(synthetic(args.cycles, rate))
    if not args.skip_allreduce:
        show(ring_all_reduce(parse_size(args.size)))
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(synthetic, args.cycles // 4, 0.3)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
