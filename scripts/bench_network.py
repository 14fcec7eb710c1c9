"""Benchmark of the packet backend (issues 3 and 6): speed of both fidelities, their agreement,
memory and scale. Prints figures only (no timed assertions anywhere).

Scenarios (each runs in its own process, so "peak RSS" is that scenario's own):
  flit       8x8 NoC torus (4 VCs, 4-flit buffers, 4-flit packets, 1-cycle links, 4-stage router),
             uniform random at 0.01 (simulated cycles per wall second; also over a 20x longer run,
             the steady state, and the one-time route building on its own), 0.1 and 0.3
             (router-to-router flit hops per wall second), flit fidelity;
  packet     the same at 0.3 with 16-flit packets and 16-flit buffers, both fidelities;
  agreement  packet vs flit fidelity: latency below saturation and saturation throughput for
             uniform, transpose and tornado on 4x4 and 8x8 tori and uniform on the 16-port switch
             (saturation throughput as `netsim synth --sweep` finds it),
             and collective times (ring and direct all-reduce, direct all-to-all) on a 4x4 NoC torus
             and on the bundled datacenter-scale torus-4x4 (with the analytical time beside); and
             every NPU of the bundled ring-8 and ring-16 sending to NPUs a few places on, where the
             fidelities disagree (a known limit: `shifted_flows_ns`);
  allreduce  ring all-reduce of --size (default 1 GiB) on the 4x4x4 torus with 4 KiB packets, raw
             endpoint sends along the dimension-0 rings, packet fidelity: wall time, peak RSS, share of
             cycles the steady-state fast-forward skipped; and 1/64 of the size cycle by cycle
             (fast_forward=False) and fast-forwarded (identical results: tests/garnet/test_packet_mode.py);
  scale      all-reduce of 64 MiB over 1024 NPUs (32x32 torus, system layer, ring per dimension)
             in packet fidelity and on the analytical backend;
  booksim    whole-process wall and CPU time of `netsim synth` against BookSim2 on the same simulation
             (8x8 torus at 0.01, 0.1 and 0.3, 16x16 at 0.15; 4 VCs, 4-flit buffers and packets,
             1-cycle links, 4-stage router, BookSim's router model and conventions): BookSim2 runs
             first in its latency mode, netsim then simulates as many cycles; runs alternate,
             --repeats each, medians (and the ratio run by run, against the BookSim2 run just before,
             and of the smallest of each); simulated cycles and flit hops per CPU second of both's whole
             process, and per wall second of both's simulation alone (BookSim2's own "Total run time",
             netsim's summary wall_time_s: the start-up of a Python process, ~0.2 s, left out). Needs
             `--booksim PATH` (a BookSim2 binary), else it prints the figures measured earlier on
             this machine kind.

    python scripts/bench_network.py [--only SCENARIO] [--cycles 20000] [--size 1GiB] [--profile]
                                    [--booksim PATH] [--repeats 3]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from booksim_agreement import BOOKSIM_BASE, BOOKSIM_WARMUP, TOPOLOGIES  # (scripts/, beside this one)
from byte_compile import byte_compile_project
from netsim.analytical import AnalyticalNetwork
from netsim.garnet.network import GarnetNetwork
from netsim.network_config import load_network
from netsim.app.traffic import run_synth, sweep_synth
from netsim.units import parse_size
from system import build_systems, load_system

SCENARIOS = ("flit", "packet", "agreement", "allreduce", "scale", "booksim")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def noc(dims=(8, 8), fidelity="flit", packet_flits=4, buffer_flits=4):
    """The issue's NoC scenario: 1-cycle links, 4 VCs, 4-stage router, 16-byte flits."""
    g = ["garnet"]
    return load_network("torus-8x8-noc", overrides=[
        (["topology", "dims"], list(dims)), (g + ["router_latency"], 4), (g + ["fidelity"], fidelity),
        (g + ["packet_bytes"], 16 * packet_flits), (g + ["buffer_flits"], buffer_flits)])


def show_synth(label: str, result: dict) -> None:
    wall = result["wall_time_s"]
    print(f"{label}: wall {wall:.2f} s, {result['cycles']} cycles ({result['cycles'] / wall:,.0f} cycles/s), "
          f"{result['flit_hops']} flit hops ({result['flit_hops'] / wall:,.0f} flit hops/s), accepted "
          f"{result['accepted_load']:.4f}, avg latency {result['avg_packet_latency_cycles']:.2f} cycles, "
          f"peak RSS {peak_rss_mib():.0f} MiB", flush=True)


def route_setup_s(config) -> float:
    """Wall time of building the route table of every NPU pair of a fresh network: a one-time
    cost that a run pays on the first packet of each pair, timed here on its own."""
    net = GarnetNetwork(config.build_topology(), config=config)
    npus = range(net.topology.npus)
    started = time.perf_counter()
    for src in npus:
        for dst in npus:
            if src != dst:
                net.route(src, dst)
    return time.perf_counter() - started


def bench_flit(args) -> None:
    show_synth("flit   8x8 uniform 0.01 4-flit packets", run_synth(noc(), "uniform", 0.01, 4, args.cycles, 1))
    # At 0.01 a run of the default length spends a good part of its time building routes on first
    # use, so route building is timed on its own and the steady state over a run 20x longer (which
    # builds them too, amortized).
    print(f"flit   8x8 route tables of all NPU pairs built in {route_setup_s(noc()) * 1e3:.1f} ms "
          "(one-time; the run above builds those of the pairs it uses)")
    show_synth("flit   8x8 uniform 0.01 4-flit packets, steady state (20x longer run)",
               run_synth(noc(), "uniform", 0.01, 4, 20 * args.cycles, 1))
    for rate in (0.1, 0.3):
        show_synth(f"flit   8x8 uniform {rate} 4-flit packets", run_synth(noc(), "uniform", rate, 4, args.cycles, 1))
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(run_synth, noc(), "uniform", 0.3, 4, args.cycles // 4, 1)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def bench_packet(args) -> None:
    for fidelity in ("packet", "flit"):
        config = noc(fidelity=fidelity, packet_flits=16, buffer_flits=16)
        show_synth(f"{fidelity:6} 8x8 uniform 0.3 16-flit packets", run_synth(config, "uniform", 0.3, 16, args.cycles, 1))


def ratio(packet: float, flit: float) -> str:
    return f"{(packet - flit) / flit:+.1%}" if flit else "n/a"


def bench_agreement(args) -> None:
    cycles = max(1000, args.cycles // 5)
    switch = lambda fidelity: load_network("switch-16", overrides=[  # noqa: E731
        (["topology", "bandwidth"], "16GB/s"), (["topology", "latency"], "1ns"),
        (["garnet", "clock_ghz"], 1.0), (["garnet", "flit_bytes"], 16), (["garnet", "packet_bytes"], 64),
        (["garnet", "buffer_flits"], 8), (["garnet", "vc_release"], "tail-credit"), (["garnet", "fidelity"], fidelity)])
    cases = [(f"torus {d[0]}x{d[1]}", pattern, (lambda fidelity, d=d: noc(d, fidelity)))
             for d in ((4, 4), (8, 8)) for pattern in ("uniform", "transpose", "tornado")]
    cases.append(("switch 16", "uniform", switch))
    print("agreement (packet vs flit fidelity, Garnet's tail-credit VC release, 4-flit packets, buffers of 4 "
          "flits; switch 8):")
    for name, pattern, make in cases:
        low = [run_synth(make(f), pattern, 0.1, 4, cycles, 1) for f in ("flit", "packet")]
        lat = [r["avg_packet_latency_cycles"] for r in low]
        sat = [sweep_synth(make(f), pattern, 4, cycles, 1)[1] for f in ("flit", "packet")]
        print(f"  {name:10} {pattern:9} latency at 0.1: flit {lat[0]:.2f} packet {lat[1]:.2f} ({ratio(lat[1], lat[0])}); "
              f"saturation throughput: flit {sat[0]:.4f} packet {sat[1]:.4f} ({ratio(sat[1], sat[0])})", flush=True)
    for kind, algorithm in (("all_reduce", "ring"), ("all_reduce", "direct"), ("all_to_all", "direct")):
        times = [collective_ns(noc((4, 4), f, 8, 8), kind, algorithm, 256 * 1024)[0] for f in ("flit", "packet")]
        print(f"  torus 4x4  {kind} {algorithm} 256 KiB, 8-flit packets: flit {times[0]:.0f} ns packet "
              f"{times[1]:.0f} ns ({ratio(times[1], times[0])})", flush=True)
    for kind, algorithm in (("all_reduce", "ring"), ("all_reduce", "direct"), ("all_to_all", "direct")):
        # the bundled datacenter-scale torus as users run collectives on it (derived sizes, per-link NIC
        # ports, tail-sent release), against the analytical model too
        times = [collective_ns(load_network("torus-4x4", overrides=[(["garnet", "fidelity"], f)]), kind, algorithm,
                               4 * 2**20)[0] for f in ("flit", "packet")]
        analytical = collective_ns(load_network("torus-4x4"), kind, algorithm, 4 * 2**20, AnalyticalNetwork)[0]
        print(f"  torus-4x4 (bundled) {kind} {algorithm} 4 MiB: flit {times[0]:.0f} ns packet {times[1]:.0f} ns "
              f"({ratio(times[1], times[0])}); analytical {analytical:.0f} ns", flush=True)
    for name in ("ring-8", "ring-16"):
        # A known disagreement (see `shifted_flows_ns`): saturated multi-hop flows on the bundled rings.
        for shifts in ((2,), (1, 2, 3)):
            times = [shifted_flows_ns(load_network(name, overrides=[(["garnet", "fidelity"], f)]), shifts, 2**20)
                     for f in ("flit", "packet")]
            analytical = shifted_flows_ns(load_network(name), shifts, 2**20, AnalyticalNetwork)
            print(f"  {name} (bundled) every NPU sends 1 MiB to each NPU +{shifts}: flit {times[0]:.0f} ns "
                  f"packet {times[1]:.0f} ns ({ratio(times[1], times[0])}); analytical {analytical:.0f} ns", flush=True)


def shifted_flows_ns(config, shifts: tuple[int, ...], nbytes: int, backend=GarnetNetwork) -> float:
    """Simulated ns until every NPU has sent `nbytes` to each NPU `shift` places on, for each shift in
    `shifts` (raw endpoint sends, all at once). On a ring every link then carries several flows at
    once, through traffic and injected. Packet fidelity is far slower than flit fidelity here
    (ring-8, shift 2: 87,740 vs 43,640 ns): packets of a through flow and of a flow ejecting at the
    next router queue in one FIFO VC, and under virtual cut-through the through packet at the front
    waits for a downstream VC with room for all of its flits (104) while the ejecting packet behind
    it waits too (traced at router 3: from cycle 938 to 1973); wormhole flit fidelity moves it on one
    credit."""
    topology = config.build_topology()
    net = backend(topology, config=config)  # the analytical backend accepts and ignores it
    npus = topology.npus
    for src in range(npus):
        for shift in shifts:
            dst = (src + shift) % npus
            net.endpoint(src).send(dst, nbytes, shift)
            net.endpoint(dst).recv(src, nbytes, shift)
    net.run()
    return net.env.now


def collective_ns(config, kind: str, algorithm: str, nbytes: int, backend=GarnetNetwork) -> tuple[float, float]:
    """(simulated ns, wall s) of one collective on every NPU through the system layer."""
    topology = config.build_topology()
    net = backend(topology, config=config)  # the analytical backend accepts and ignores it
    key = f"{kind.replace('_', '-')}-implementation"
    systems = build_systems(net, load_system("default", [([key], [algorithm] * len(topology.dims))]))
    started = time.perf_counter()
    for system in systems:
        getattr(system, kind)(nbytes)
    net.run()
    return net.env.now, time.perf_counter() - started


def ring_allreduce(nbytes: int, fast_forward: bool = True) -> tuple[GarnetNetwork, float]:
    """Ring all-reduce of `nbytes` on the 4x4x4 torus with 4 KiB packets, packet fidelity: raw
    endpoint sends along the dimension-0 rings. Returns the network and the wall time."""
    config = load_network("torus-4x4x4", overrides=[(["garnet", "packet_bytes"], 4096),
                                                     (["garnet", "fidelity"], "packet")])
    topo = config.build_topology()
    net = GarnetNetwork(topo, config=config, fast_forward=fast_forward)
    ring = topo.dims[0].size
    chunk = nbytes // ring

    def npu_process(npu: int):
        peers = topo.peers(npu, 0)
        me = peers.index(npu)
        nxt, prev = peers[(me + 1) % ring], peers[(me - 1) % ring]
        endpoint = net.endpoint(npu)
        for step in range(2 * (ring - 1)):  # reduce-scatter, then all-gather
            endpoint.send(nxt, chunk, step)
            yield endpoint.recv(prev, chunk, step)

    for npu in range(topo.npus):
        net.env.process(npu_process(npu))
    started = time.perf_counter()
    net.run()
    return net, time.perf_counter() - started


def bench_allreduce(args) -> None:
    nbytes = parse_size(args.size)
    small = nbytes // 64
    for size, fast_forward in ((nbytes, True), (small, False), (small, True)):
        net, wall = ring_allreduce(size, fast_forward)
        packets = net.packet_stats.packets
        cycles = net.clock.now_cycle()
        figures = net.fast_forward_figures()
        mode = (f"fast-forward ({figures['mode']}) skipped {figures['skipped_share']:.1%} of the cycles in "
                f"{figures['skips']} jumps" if fast_forward else "cycle by cycle (fast_forward=False)")
        print(f"packet ring all-reduce {size / 2**20:g} MiB on 4x4x4, 4 KiB packets ({net.flit_bytes}-byte flits), "
              f"{mode}: wall {wall:.2f} s, {cycles} cycles ({net.env.now / 1e6:.3f} ms simulated), {packets} packets "
              f"({packets / wall:,.0f} packets/s), {net.flit_hops()} flit hops ({net.flit_hops() / wall:,.0f}/s), "
              f"peak RSS {peak_rss_mib():.0f} MiB", flush=True)


def bench_scale(args) -> None:
    config = load_network("torus-8x8", overrides=[(["topology", "dims"], [32, 32]), (["garnet", "fidelity"], "packet")])
    for label, backend in (("analytical", AnalyticalNetwork), ("packet", GarnetNetwork)):
        ns, wall = collective_ns(config, "all_reduce", "ring", 64 * 2**20, backend)
        print(f"{label:10} all-reduce 64 MiB on 32x32 torus (1024 NPUs): wall {wall:.2f} s, {ns / 1e6:.3f} ms "
              f"simulated, peak RSS {peak_rss_mib():.0f} MiB", flush=True)


# BookSim2's settings are booksim_agreement.py's (the validation README's), 4 VCs, 4-flit buffers and packets
BOOKSIM_CASE = dict(num_vcs=4, vc_buf_size=4, packet_size=4, wait_for_tail_credit=1, traffic="uniform")
NETSIM_AS_BOOKSIM = ["--set", "garnet.allocator=booksim", "--set", "garnet.routing=dor-booksim",
                     "--set", "garnet.router_latency=4", "--set", "garnet.vcs=4", "--set", "garnet.buffer_flits=4",
                     "--set", "garnet.packet_bytes=64", "--set", "garnet.flit_bytes=16",
                     "--include-source", "--injection-delay", "1", "--quiet"]
# Measured side by side on this machine kind (issue 25): BookSim2's whole-process figures
BOOKSIM_EARLIER = ("BookSim2 built here, per CPU second of its whole process: 296 k router-to-router flit hops at 0.3 on "
                   "the 8x8 torus, 28.8 k cycles at 0.01")


def timed(command: list[str]) -> tuple[float, float, str]:
    """Wall time, CPU time (user + system) and output of a whole process (BookSim2 exits 255 after a
    normal run: not checked). CPU time is the fairer figure on a machine with other jobs on it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True).stdout
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def bench_booksim(args) -> None:
    if not args.booksim:
        print(f"booksim: no --booksim PATH given; figures measured earlier: {BOOKSIM_EARLIER}")
        return
    netsim = str(Path(sys.executable).with_name("netsim"))
    byte_compile_project()
    for k, rate in ((8, 0.01), (8, 0.1), (8, 0.3), (16, 0.15)):
        with tempfile.TemporaryDirectory() as folder:
            config = Path(folder) / "booksim.cfg"
            settings = {**BOOKSIM_BASE, **TOPOLOGIES["torus-8x8"][0], **BOOKSIM_CASE, "k": k, "injection_rate": rate}
            config.write_text("".join(f"{key} = {value};\n" for key, value in settings.items()))
            walls = {"booksim": [], "netsim": []}
            cpus = {"booksim": [], "netsim": []}
            sim_walls = {"booksim": [], "netsim": []}  # each one's own timing of its simulation
            cycles = booksim_hops = netsim_hops = None
            for _ in range(args.repeats):  # alternate: a machine's load drifts alike for both
                wall, cpu, out = timed([args.booksim, str(config)])
                walls["booksim"].append(wall)
                cpus["booksim"].append(cpu)
                cycles = int(re.search(r"Time taken is (\d+) cycles", out).group(1))
                sim_walls["booksim"].append(float(re.search(r"Total run time ([0-9.]+)", out).group(1)))
                # BookSim counts routers traversed; router-to-router flit hops are one fewer per flit
                routers = float(re.findall(r"Hops average = ([0-9.]+)", out)[-1])
                booksim_hops = rate * k * k * cycles * (routers - 1)
                warmup = BOOKSIM_WARMUP
                wall, cpu, out = timed([netsim, "synth", "--network", "torus-8x8-noc",
                                        "--set", f"topology.dims=[{k},{k}]", "--pattern", "uniform",
                                        "--rate", str(rate), "--cycles", str(cycles - warmup), "--warmup", str(warmup),
                                        "--out", str(Path(folder) / "out"), *NETSIM_AS_BOOKSIM])
                summary = Path(folder) / "out" / "summary.json"
                if not summary.exists():
                    sys.exit(f"netsim synth wrote no summary.json: {out[-500:]}")
                figures = json.loads(summary.read_text())
                netsim_hops = figures["flit_hops"]
                sim_walls["netsim"].append(figures["wall_time_s"])
                walls["netsim"].append(wall)
                cpus["netsim"].append(cpu)
        booksim, ours = statistics.median(walls["booksim"]), statistics.median(walls["netsim"])
        booksim_cpu, ours_cpu = statistics.median(cpus["booksim"]), statistics.median(cpus["netsim"])
        print(f"{k}x{k} uniform {rate}: {cycles} cycles (medians of {args.repeats}, whole process)\n"
              f"  wall: BookSim2 {booksim:.2f} s, netsim {ours:.2f} s: netsim/BookSim2 {ours / booksim:.2f}x\n"
              f"  CPU:  BookSim2 {booksim_cpu:.2f} s, netsim {ours_cpu:.2f} s: netsim/BookSim2 {ours_cpu / booksim_cpu:.2f}x\n"
              f"  per CPU second: cycles BookSim2 {cycles / booksim_cpu:,.0f}, netsim {cycles / ours_cpu:,.0f}; "
              f"flit hops BookSim2 {booksim_hops / booksim_cpu:,.0f} (estimated: offered flits x its mean hops), "
              f"netsim {netsim_hops / ours_cpu:,.0f}", flush=True)
        # this machine's speed drifts by a third within minutes: each netsim run against the BookSim2 run
        # just before it cancels the drift; the smallest of each is the least disturbed
        paired = [ours_run / theirs for ours_run, theirs in zip(cpus["netsim"], cpus["booksim"])]
        print(f"  CPU run by run: netsim/BookSim2 {' '.join(f'{r:.2f}' for r in paired)}, median "
              f"{statistics.median(paired):.2f}x; smallest of each: BookSim2 {min(cpus['booksim']):.2f} s, netsim "
              f"{min(cpus['netsim']):.2f} s: {min(cpus['netsim']) / min(cpus['booksim']):.2f}x", flush=True)
        booksim_sim, ours_sim = statistics.median(sim_walls["booksim"]), statistics.median(sim_walls["netsim"])
        print(f"  simulation alone: BookSim2 {booksim_sim:.2f} s, netsim {ours_sim:.2f} s: netsim/BookSim2 "
              f"{ours_sim / booksim_sim:.2f}x; per wall second: cycles BookSim2 {cycles / booksim_sim:,.0f}, netsim "
              f"{cycles / ours_sim:,.0f}; flit hops BookSim2 {booksim_hops / booksim_sim:,.0f}, netsim "
              f"{netsim_hops / ours_sim:,.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=SCENARIOS, help="run one scenario in this process")
    parser.add_argument("--cycles", type=int, default=20000)
    parser.add_argument("--size", default="1GiB", help="all-reduce size of the allreduce scenario")
    parser.add_argument("--profile", action="store_true", help="cProfile the flit scenario at 0.3")
    parser.add_argument("--booksim", help="a BookSim2 binary to time side by side (scenario booksim)")
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per case (scenario booksim)")
    args = parser.parse_args()
    if args.only:
        globals()[f"bench_{args.only}"](args)
        return
    for name in SCENARIOS:  # a process each: peak RSS per scenario
        subprocess.run([sys.executable, __file__, "--only", name] + sys.argv[1:], check=True)


if __name__ == "__main__":
    main()
