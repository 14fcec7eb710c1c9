"""Speed of this checkout against another one (an older commit, say), side by side: each scenario
runs in a fresh process per checkout, the two alternating, `--repeats` times; prints the CPU time
of the simulation (imports excluded; the smallest of the repeats), the ratio, and each side's
result, so a change meant to keep results shows it did. Prints figures only.

Scenarios (the packet backend's, as in bench_network.py):
  flit-0.01 flit-0.1 flit-0.3   8x8 NoC torus, uniform random, 4-flit packets, flit fidelity
  packet-0.3                    the same at 0.3 with 16-flit packets and buffers, packet fidelity
  ring-4x4                      4 MiB ring all-reduce on the bundled torus-4x4 (flit fidelity)
  scale-16x16                   4 MiB ring all-reduce on a 16x16 torus, packet fidelity

    git worktree add /tmp/before HEAD~3
    python scripts/bench_compare.py /tmp/before [--scenarios flit-0.3,scale-16x16] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

SCENARIOS = ("flit-0.01", "flit-0.1", "flit-0.3", "packet-0.3", "ring-4x4", "scale-16x16")
SYNTH_CYCLES = {"flit-0.01": 60000, "flit-0.1": 5000, "flit-0.3": 2500, "packet-0.3": 4000}


def noc(load_network, fidelity: str, packet_flits: int):
    """bench_network.py's NoC: 1-cycle links, 4 VCs, 4-stage router, 16-byte flits (built here from
    load_network alone: the child imports the other checkout's packages, whose scripts may differ)."""
    g = ["garnet"]
    return load_network("torus-8x8-noc", overrides=[
        (g + ["router_latency"], 4), (g + ["fidelity"], fidelity), (g + ["packet_bytes"], 16 * packet_flits),
        (g + ["buffer_flits"], packet_flits)])


def run_scenario(name: str) -> tuple[float, object]:
    """(CPU seconds, result) of one scenario, with whatever `netsim` this process imports."""
    from netsim.network_config import load_network

    if name in SYNTH_CYCLES:
        from netsim.app.traffic import run_synth

        fidelity, rate = name.split("-")
        flits = 16 if fidelity == "packet" else 4
        config = noc(load_network, fidelity, flits)
        started = time.process_time()
        result = run_synth(config, "uniform", float(rate), flits, SYNTH_CYCLES[name], 1)
        return time.process_time() - started, result["avg_packet_latency_cycles"]
    from netsim.garnet.network import GarnetNetwork
    from system import build_systems, load_system

    if name == "ring-4x4":
        config = load_network("torus-4x4")
    else:
        config = load_network("torus-8x8", overrides=[(["topology", "dims"], [16, 16]), (["garnet", "fidelity"], "packet")])
    net = GarnetNetwork(config.build_topology(), config=config)
    systems = build_systems(net, load_system("default", [(["all-reduce-implementation"], ["ring"] * len(net.topology.dims))]))
    started = time.process_time()
    for system in systems:
        system.all_reduce(4 * 2**20)
    net.run()
    return time.process_time() - started, net.env.now


def in_checkout(checkout: Path, name: str) -> tuple[float, str]:
    """Run scenario `name` in a child process that imports `checkout`'s packages."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, __file__, "--child", name], cwd=checkout, env=env,
                          capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise SystemExit(f"{checkout}: scenario {name} failed: {last}")
    seconds, result = done.stdout.split("\t")
    return float(seconds), result.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", nargs="?", type=Path, help="the checkout to compare with")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        seconds, result = run_scenario(args.child)
        print(f"{seconds}\t{result!r}")
        return
    if args.other is None:
        parser.error("give the checkout to compare with")
    if not (args.other / "netsim").is_dir():
        parser.error(f"{args.other}: not a checkout of netsim (no netsim/ folder there)")
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: expected 1 or more")
    here = Path(__file__).resolve().parents[1]
    names = args.scenarios.split(",")
    unknown = [name for name in names if name not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario {unknown[0]!r}: expected one of {', '.join(SCENARIOS)}")
    print(f"CPU seconds of the simulation, smallest of {args.repeats} (alternating); ratio this / other")
    checkouts = (here, args.other.resolve())
    for name in names:
        runs: tuple[list, list] = ([], [])  # (seconds, result) per repeat, this checkout's then the other's
        for _ in range(args.repeats):
            for checkout, side in zip(checkouts, runs):
                side.append(in_checkout(checkout, name))
        this, other = (min(seconds for seconds, _ in side) for side in runs)
        results = [sorted({result for _, result in side}) for side in runs]
        same = "same result" if results[0] == results[1] else f"results differ: {results[0]} vs {results[1]}"
        print(f"{name:12} this {this:7.3f} s  other {other:7.3f} s  ratio {this / other:5.2f}  {same}", flush=True)


if __name__ == "__main__":
    main()
