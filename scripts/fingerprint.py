"""Fingerprint of simulated results: run a fixed set of scenarios and print one line per result,
so a change can show which results moved (or prove none did).

Scenarios: every bundled datacenter network x algorithm x collective (1 MiB and 64 MiB, default
system, analytical backend; a scenario that fails is recorded with its error), the same
at 1 MiB with ASTRA-sim's Ring_4chunks system, `netsim run` of every bundled workload on
torus-4x4 and torus-2x4x4 (2 passes), a few packet-backend collectives, and the packet backend in
depth (`packet`: collectives on six networks in flit and packet fidelity, synthetic traffic under
both fidelities, VC-release rules and router models; CI compares the optional compiled build's).

    python scripts/fingerprint.py > before.txt        # ... change ...
    python scripts/fingerprint.py > after.txt
    python scripts/fingerprint.py --diff before.txt after.txt   # what moved, by how much
    python scripts/fingerprint.py --only run          # one group: collective | astra | run | garnet | packet

Each line is `scenario<TAB>value`: a time in ns printed with repr (bit for bit), or `error: ...`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from netsim.errors import NetsimError
from netsim.network_config import load_network
from netsim.app.runner import run_collective, run_training
from system import load_system
from workload import load_workload

NETWORKS = ("ring-8", "ring-16", "switch-16", "torus-4x4", "torus-2x4x4", "torus-4x4x4", "fat-tree-32", "dgx-8x4")
COLLECTIVES = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all")
ALGORITHMS = {"ring": COLLECTIVES, "direct": COLLECTIVES, "halving-doubling": COLLECTIVES[:3],
              "double-binary-tree": COLLECTIVES[:1]}  # algorithm -> the collectives it implements
WORKLOADS = ("Resnet50_DataParallel", "Transformer_HybridParallel", "Transformer_HybridParallel_Fwd_In_Bckwd",
             "DLRM_HybridParallel", "MLP_HybridParallel_Data_Model", "MLP_HybridParallel_Model_Data",
             "MLP_ModelParallel", "sample_per_layer_parallel_HybridCustomized", "microAllReduce", "microAllToAll")
GARNET = (("ring-8", "all-reduce", "ring", "1MiB"), ("torus-4x4", "all-to-all", "direct", "1MiB"),
          ("torus-4x4", "all-reduce", "ring", "4MiB"), ("switch-16", "all-gather", "direct", "1MiB"))
PACKET_NETWORKS = ("torus-4x4", "ring-8", "switch-16", "fat-tree-32", "dgx-8x4", "torus-2x4x4")
GROUPS = ("collective", "astra", "run", "garnet", "packet")


def collective_time(network: str, system: str, kind: str, algorithm: str, size: str, backend: str = "analytical",
                    overrides: list | tuple = ()):
    from netsim.units import parse_size

    net = load_network(network, overrides=overrides, backend=backend)
    sys_cfg = load_system(system, [([f"{kind}-implementation"], algorithm)])
    return run_collective(net, sys_cfg, kind, parse_size(size)).summary["collective_time_ns"]


def scenarios(only: str | None):
    """(name, thunk) pairs in a fixed order."""
    if only in (None, "collective"):
        for network in NETWORKS:
            for algorithm, kinds in ALGORITHMS.items():
                for kind in kinds:
                    for size in ("1MiB", "64MiB"):
                        yield (f"collective {network} {algorithm} {kind} {size}",
                               lambda n=network, a=algorithm, k=kind, s=size: collective_time(n, "default", k, a, s))
    if only in (None, "astra"):
        for network in NETWORKS:
            for algorithm, kinds in ALGORITHMS.items():
                for kind in kinds:
                    yield (f"collective {network} {algorithm} {kind} 1MiB Ring_4chunks",
                           lambda n=network, a=algorithm, k=kind: collective_time(n, "Ring_4chunks", k, a, "1MiB"))
    if only in (None, "run"):
        for network in ("torus-4x4", "torus-2x4x4"):
            for name in WORKLOADS:
                def run(n=network, w=name):
                    summary = run_training(load_network(n), load_system("default"), load_workload(w), passes=2).summary
                    return summary["end_to_end_time_ns"], summary["compute_time_ns"], summary["exposed_comm_time_ns"]
                yield f"run {network} {name}", run
    if only in (None, "garnet"):
        for network, kind, algorithm, size in GARNET:
            yield (f"garnet {network} {algorithm} {kind} {size}",
                   lambda n=network, k=kind, a=algorithm, s=size: collective_time(n, "default", k, a, s, "garnet"))
    if only == "packet":  # (not in the default set: the garnet group samples it)
        yield from packet_scenarios()


def packet_scenarios():
    """The packet backend's own fingerprint: collective times, and every figure of a synthetic run."""
    from netsim.app.traffic import run_synth

    for network in PACKET_NETWORKS:
        for fidelity in ("flit", "packet"):
            for kind, algorithm, size in (("all-reduce", "ring", "1MiB"), ("all-to-all", "direct", "512KiB")):
                yield (f"packet {network} {fidelity} {algorithm} {kind} {size}",
                       lambda n=network, f=fidelity, k=kind, a=algorithm, s=size:
                       collective_time(n, "default", k, a, s, "garnet", [(["garnet", "fidelity"], f)]))
    for fidelity in ("flit", "packet"):
        for release in ("tail-credit", "tail-sent"):
            for allocator in ("garnet", "booksim"):
                settings = {"fidelity": fidelity, "vc_release": release, "allocator": allocator, "buffer_flits": 8,
                            "router_latency": 4, "packet_bytes": 64}

                def synth(settings=settings):
                    overrides = [(["garnet", key], value) for key, value in settings.items()]
                    config = load_network("torus-8x8-noc", overrides=[*overrides, (["topology", "dims"], [4, 4])])
                    result = run_synth(config, "uniform", 0.4, 4, 1500, 1)
                    return tuple(value for key, value in sorted(result.items()) if key != "wall_time_s")
                yield f"packet synth torus-4x4 uniform 0.4 {fidelity} {release} {allocator}", synth


def measure(only: str | None) -> None:
    for name, thunk in scenarios(only):
        try:
            value = repr(thunk())
        except NetsimError as exc:
            value = f"error: {str(exc).splitlines()[0]}"
        print(f"{name}\t{value}", flush=True)


def read(path: Path) -> dict[str, str]:
    return dict(line.rstrip("\n").split("\t", 1) for line in path.read_text().splitlines() if "\t" in line)


def first_number(value: str) -> float | None:
    try:
        parsed = eval(value, {})  # our own repr output: a float or a tuple of floats
    except Exception:
        return None
    return float(parsed[0] if isinstance(parsed, tuple) else parsed)


def diff(before_path: Path, after_path: Path) -> None:
    """Print each scenario whose value changed, with the relative change of its (first) time."""
    before, after = read(before_path), read(after_path)
    moved = 0
    for name in before.keys() | after.keys():
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        moved += 1
        a, b = first_number(old or ""), first_number(new or "")
        change = f"{(b - a) / a:+.2%}" if a and b is not None else "-"
        print(f"{change:>9}  {name}: {old} -> {new}")
    print(f"{moved} of {len(before.keys() | after.keys())} scenarios moved")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=GROUPS)
    parser.add_argument("--diff", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.diff:
        diff(*args.diff)
    else:
        measure(args.only)


if __name__ == "__main__":
    sys.exit(main())
