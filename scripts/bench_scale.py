"""Scale benchmark: whole-process wall time and peak memory of `netsim` at 256 to 16,384 NPUs,
beside ASTRA-sim 2.x's analytical binary when one is given.

Each case runs `netsim collective` (or `netsim run` for a training iteration) as a subprocess
under /usr/bin/time, on an ASTRA-sim 2.x network YAML and system JSON written for the case, so
the wall time includes Python's start-up and the report writing. With `--astra PATH` the same
collective runs in ASTRA-sim (one Chakra trace per NPU with one COMM_COLL node, written by
netsim's own Chakra writer), alternating with netsim `--repeat` times; the best of each is
reported with their ratio. Without `--astra`, ASTRA-sim's figures measured for issue 15 on this
machine kind are printed as the reference.

With `--backend garnet` it runs issue 26's cases on the packet backend instead (packet fidelity,
the bundled torus-8x8's link and packet settings on larger tori): a 64 MiB all-reduce on 32x32, a
1 GiB one on 16x16x16, and transformer iterations (tensor 8 x pipeline 8 x data 4 or 16) on 256 and
1024 NPUs, on tori of [8, 8, data] and of [8, data, 8] (`-rings`: laid out as `workload gen` numbers the
NPUs, each tensor and data group a ring, so the stages run in lockstep and fold onto a quotient torus:
docs/scale.md). Each prints the simulated time beside the analytical backend's for the same case (their
ratio: what packets and congestion add), and what the steady-state fast-forward did (summary.json's
`fast_forward`): the partitions it found (`garnet.fast_forward = "partitions"`, the default), the
share of their cycles it skipped (of the simulated cycles for the whole-network one), its skips, and the
quotient torus the run was simulated on (summary.json's `folded_to`; `-`: every copy sent).
`--fast-forward network|off` runs the cases with the whole-network fast-forward or none (the same
results; `off` for comparing, where it finishes).

    python scripts/bench_scale.py --quick                 # ~1 minute
    python scripts/bench_scale.py --astra /path/to/AstraSim_Analytical_Congestion_Unaware
    python scripts/bench_scale.py --cases ring32x32-ar,train-tp8-pp8-dp64 --repeat 3
    python scripts/bench_scale.py --backend garnet --timeout 1200
    python scripts/bench_scale.py --backend garnet --cases torus32x32-ar-64MiB --fast-forward off
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from byte_compile import byte_compile_project  # (scripts/, beside this one)

GiB = 1 << 30
SYSTEM_TEMPLATE = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
                   "preferred-dataset-splits": 4, "collective-optimization": "localBWAware", "local-mem-bw": 1600,
                   "boost-mode": 0}


@dataclass
class Case:
    name: str
    topology: list  # ASTRA-sim 2.x YAML: (kind, NPUs, GB/s, ns) per dimension
    kind: str = "all-reduce"
    algorithm: str = "ring"
    size: int = GiB
    backend: str = "analytical"
    workload: dict = field(default_factory=dict)  # `netsim workload gen` options: a training iteration
    reference: str = "-"  # ASTRA-sim's wall time measured for issue 15 (s), when there is one
    quick: bool = False
    dims: list = field(default_factory=list)  # packet cases: the bundled torus-8x8 with these dimensions

    @property
    def npus(self) -> int:
        n = 1
        for _kind, size, _bw, _lat in self.topology:
            n *= size
        return n


def ring(n, bw=50.0, lat=500.0):
    return ("Ring", n, bw, lat)


CASES = [
    Case("ring256-ar", [ring(256)], reference="0.47-0.91", quick=True),
    Case("ring1024-ar", [ring(1024)], reference="12.0-12.3", quick=True),
    Case("ring32x32-ar", [ring(32), ring(32)], reference="1.2-1.3", quick=True),
    Case("ring16x16x16-ar", [ring(16), ring(16), ring(16)], reference="5.8-5.9", quick=True),
    Case("ring64x64-rs", [ring(64), ring(64)], kind="reduce-scatter", reference="7.3-7.9"),
    Case("ring64x64-ag", [ring(64), ring(64)], kind="all-gather", size=GiB // 4096),
    Case("ring64x64-a2a-direct", [ring(64), ring(64)], kind="all-to-all", algorithm="direct"),
    Case("ring32x32-ar-direct", [ring(32), ring(32)], algorithm="direct"),
    Case("ring16x16x16-a2a", [ring(16), ring(16), ring(16)], kind="all-to-all"),
    Case("ring16-switch256-ar", [ring(16), ("Switch", 256, 25.0, 1000.0)], algorithm="ring_direct"),
    Case("ring4096-ar", [ring(4096)], reference="357"),
    Case("ring16x16x16-ar-congestion-aware", [ring(16), ring(16), ring(16)], backend="congestion-aware"),
    Case("ring16x16x16-ar-per-message", [ring(16), ring(16), ring(16)], backend="per-message",
         reference="5.8-5.9"),
    Case("train-tp8-dp512", [("FullyConnected", 8, 150.0, 100.0), ring(16), ("Switch", 32, 25.0, 1000.0)],
         workload={"tp": 8, "dp": 512, "layers": 4}),
    Case("train-pp8-dp512", [ring(8), ring(16), ("Switch", 32, 25.0, 1000.0)],
         workload={"pp": 8, "dp": 512, "layers": 8, "micro-batches": 8}),
    Case("train-tp8-pp8-dp64", [("FullyConnected", 8, 150.0, 100.0), ring(16), ("Switch", 32, 25.0, 1000.0)],
         workload={"tp": 8, "pp": 8, "dp": 64, "layers": 8, "micro-batches": 8}),
    Case("train-tp8-dp2048", [("FullyConnected", 8, 150.0, 100.0), ring(16), ("Switch", 128, 25.0, 1000.0)],
         workload={"tp": 8, "dp": 2048, "layers": 4}),
    Case("train-pp8-dp2048", [ring(8), ring(16), ("Switch", 128, 25.0, 1000.0)],
         workload={"pp": 8, "dp": 2048, "layers": 8, "micro-batches": 8}),
    Case("train-tp8-pp8-dp256", [("FullyConnected", 8, 150.0, 100.0), ring(16), ("Switch", 128, 25.0, 1000.0)],
         workload={"tp": 8, "pp": 8, "dp": 256, "layers": 8, "micro-batches": 8}),
]


# Issue 26's cases (`--backend garnet`): packet fidelity on the bundled torus-8x8's settings
PACKET_NETWORK = "torus-8x8"
PACKET_CASES = [
    Case("torus32x32-ar-64MiB", [ring(32), ring(32)], size=64 << 20, backend="garnet", dims=[32, 32], quick=True),
    Case("torus16x16x16-ar-1GiB", [ring(16)] * 3, backend="garnet", dims=[16, 16, 16]),
    Case("train-tp8-pp8-dp4", [ring(8), ring(8), ring(4)], backend="garnet", dims=[8, 8, 4], quick=True,
         workload={"tp": 8, "pp": 8, "dp": 4, "layers": 8, "micro-batches": 8}),
    Case("train-tp8-pp8-dp16", [ring(8), ring(8), ring(16)], backend="garnet", dims=[8, 8, 16],
         workload={"tp": 8, "pp": 8, "dp": 16, "layers": 8, "micro-batches": 8}),
    # the same iterations on tori laid out as `workload gen` numbers the NPUs (tensor fastest, then data,
    # then pipeline): each tensor and data group a ring of the torus, so its stages run in lockstep, folded
    Case("train-tp8-dp4-pp8-rings", [ring(8), ring(4), ring(8)], backend="garnet", dims=[8, 4, 8],
         workload={"tp": 8, "pp": 8, "dp": 4, "layers": 8, "micro-batches": 8}),
    Case("train-tp8-dp16-pp8-rings", [ring(8), ring(16), ring(8)], backend="garnet", dims=[8, 16, 8],
         workload={"tp": 8, "pp": 8, "dp": 16, "layers": 8, "micro-batches": 8}),
]


def write_inputs(case: Case, folder: Path) -> tuple[Path, Path]:
    """The case's network YAML and system JSON (ASTRA-sim 2.x formats, read by both simulators)."""
    network = folder / "network.yml"
    columns = list(zip(*case.topology))
    network.write_text(f"topology: [ {', '.join(columns[0])} ]\nnpus_count: {list(columns[1])}\n"
                       f"bandwidth: {list(columns[2])}\nlatency: {list(columns[3])}\n")
    algorithms = case.algorithm.split("_")
    if len(algorithms) == 1:
        algorithms = algorithms * len(case.topology)
    system = folder / "system.json"
    system.write_text(json.dumps({**SYSTEM_TEMPLATE, **{f"{kind}-implementation": algorithms for kind in
                                                        ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")}}))
    return network, system


def timed(command: list[str], cwd: Path, timeout: float | None = None) -> tuple[float, int, str]:
    """(wall s, peak RSS MiB, stdout) of one whole process, from /usr/bin/time; raises TimeoutExpired."""
    process = subprocess.Popen(["/usr/bin/time", "-f", "%e %M", *command], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=cwd, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # /usr/bin/time and the simulator under it
        process.communicate()
        raise
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {stderr.strip()[-500:]}")
    wall, rss = stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss) // 1024, stdout


def netsim_command(case: Case, network: Path, system: Path, folder: Path, backend: str | None = None,
                   fast_forward: str | None = None) -> list[str]:
    """The case's netsim command (`backend`: another than the case's own, e.g. a packet case's analytical twin;
    `fast_forward`: the packet backend's garnet.fast_forward, if not its default)."""
    netsim = [str(Path(sys.executable).parent / "netsim")]
    backend = backend or ("analytical" if case.backend == "per-message" else case.backend)
    if case.dims:  # a packet case: the bundled network, resized
        where = ["--network", PACKET_NETWORK, "--set", f"topology.dims=[{','.join(map(str, case.dims))}]"]
    else:
        where = ["--network", str(network), "--system", str(system)]
    common = [*where, "--backend", backend, "--quiet", "--json", "--out", str(folder / "out")]
    if backend == "garnet":
        common += ["--set", "garnet.fidelity=packet"]
        if fast_forward:
            common += ["--set", f"garnet.fast_forward={fast_forward}"]
    if case.backend == "per-message":
        common += ["--set", "collective-simulation=per-message"]
    if case.workload:
        options = [f"--{key}={value}" for key, value in case.workload.items()]
        if not (folder / "workload").exists():
            subprocess.run([*netsim, "workload", "gen", *options, "--quiet", "--out", str(folder / "workload")],
                           check=True)
        workload = next((folder / "workload").glob("*.txt"))
        return [*netsim, "run", "--workload", str(workload), *common]
    return [*netsim, "collective", case.kind, "--size", str(case.size), *common]


def astra_command(case: Case, binary: str, network: Path, system: Path, folder: Path) -> list[str] | None:
    """ASTRA-sim's command on one-collective traces written here (None: a training case, not run there)."""
    if case.workload or case.backend == "congestion-aware":
        return None
    from workload.chakra.schema import NODE_TYPES, AttributeProto, GlobalMetadata, Node
    from workload.chakra.stream import write_trace_file
    from workload.chakra.write import COMM_TYPE_NUMBER

    node = Node(id=0, name="coll", type=NODE_TYPES.index("COMM_COLL_NODE"))
    node.attr.append(AttributeProto(name="is_cpu_op", bool_val=False))
    node.attr.append(AttributeProto(name="comm_type", int64_val=COMM_TYPE_NUMBER[case.kind]))
    node.attr.append(AttributeProto(name="comm_size", int64_val=case.size))
    traces = folder / "traces"
    traces.mkdir(exist_ok=True)
    for npu in range(case.npus):
        write_trace_file(traces / f"coll.{npu}.et", GlobalMetadata(version="0.0.4"), [node])
    memory = folder / "memory.json"
    memory.write_text('{"memory-type": "NO_MEMORY_EXPANSION"}')
    return [binary, f"--workload-configuration={traces / 'coll'}", f"--system-configuration={system}",
            f"--remote-memory-configuration={memory}", f"--network-configuration={network}",
            f"--logging-folder={folder / 'log'}"]


def run_packet_case(case: Case, timeout: float | None, fast_forward: str | None) -> dict:
    """A packet case once, then its analytical twin: wall time, peak RSS, simulated times, fast-forward."""
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        folder = Path(tmp)
        try:
            wall, rss, out = timed(netsim_command(case, Path(), Path(), folder, fast_forward=fast_forward), folder,
                                   timeout)
        except subprocess.TimeoutExpired:
            return {"case": case.name, "npus": case.npus, "timeout": True}
        except RuntimeError as exc:
            return {"case": case.name, "npus": case.npus, "error": str(exc).splitlines()[-2:]}
        result = json.loads(out)
        _, _, twin = timed(netsim_command(case, Path(), Path(), folder, "analytical"), folder, timeout)
    key = "end_to_end_time_ns" if case.workload else "collective_time_ns"
    ff = result["fast_forward"]
    return {"case": case.name, "npus": case.npus, "netsim_s": wall, "netsim_rss_MiB": rss, "sim_time_ns": result[key],
            "analytical_ns": json.loads(twin)[key], "cycles": ff["cycles"], "mode": ff["mode"],
            "partitions": ff.get("partitions", "-"), "skipped": ff["skipped_share"], "skips": ff["skips"],
            "events": result.get("events"), "folded": result.get("folded_to"), "warnings": result.get("warnings", [])}


def print_packet_cases(cases: list[Case], timeout: float | None, fast_forward: str | None) -> None:
    print("| case | NPUs | netsim s | peak RSS MiB | simulated ns | analytical ns | packet / analytical | cycles | "
          "fast-forward | partitions | skipped | skips | events | quotient |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for case in cases:
        row = run_packet_case(case, timeout, fast_forward)
        if row.get("error") or row.get("timeout"):
            what = f"refused: {row['error'][0][-160:]}" if row.get("error") else f"> {timeout:g} (stopped)"
            print(f"| {case.name} | {case.npus} | {what} |" + " - |" * 11, flush=True)
            continue
        print(f"| {case.name} | {case.npus} | {row['netsim_s']:.2f} | {row['netsim_rss_MiB']} | {row['sim_time_ns']:.0f} "
              f"| {row['analytical_ns']:.0f} | {row['sim_time_ns'] / row['analytical_ns']:.3f} | {row['cycles']} | "
              f"{row['mode']} | {row['partitions']} | {row['skipped']:.1%} | {row['skips']} | {row['events']} | "
              f"{'x'.join(map(str, row['folded'])) if row['folded'] else '-'} |", flush=True)
        for warning in row["warnings"]:  # (a partition conflict: simulated again, say so)
            print(f"  {case.name}: {warning}", flush=True)


def run_case(case: Case, astra: str | None, repeat: int, timeout: float | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        folder = Path(tmp)
        network, system = write_inputs(case, folder)
        command = netsim_command(case, network, system, folder)
        other = astra_command(case, astra, network, system, folder) if astra else None
        netsim_runs, astra_runs, result = [], [], {}
        for _ in range(repeat):  # alternate the two simulators
            try:
                wall, rss, out = timed(command, folder, timeout)
            except subprocess.TimeoutExpired:
                return {"case": case.name, "npus": case.npus, "timeout": True}
            except RuntimeError as exc:  # netsim refused the case (one line, e.g. its memory estimate)
                return {"case": case.name, "npus": case.npus, "error": str(exc).splitlines()[-2:]}
            netsim_runs.append((wall, rss))
            result = json.loads(out)
            if other:
                try:
                    wall, rss, out = timed(other, folder, timeout)
                except subprocess.TimeoutExpired:
                    other = None
                    continue
                times = [int(t) for t in re.findall(r"sys\[\d+\] finished, (\d+) cycles", out)]
                astra_runs.append((wall, rss, max(times) if times else None))
    row = {"case": case.name, "npus": case.npus, "netsim_s": min(w for w, _ in netsim_runs),
           "netsim_rss_MiB": max(r for _, r in netsim_runs), "events": result.get("events"),
           "sim_time_ns": result.get("collective_time_ns", result.get("end_to_end_time_ns"))}
    if astra_runs:
        row.update(astra_s=min(w for w, _, _ in astra_runs), astra_rss_MiB=max(r for _, r, _ in astra_runs),
                   astra_time_ns=astra_runs[0][2])
        row["ratio"] = row["netsim_s"] / row["astra_s"]
    else:
        row["astra_s"] = case.reference
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--astra", metavar="PATH", help="ASTRA-sim 2.x analytical binary to run beside netsim")
    parser.add_argument("--quick", action="store_true", help="the quick subset (about a minute)")
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="alternating runs per case (best wall time kept)")
    parser.add_argument("--timeout", type=float, help="give up a run after this many seconds (reported as such)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--fast-forward", choices=("partitions", "network", "off"),
                        help="--backend garnet: the packet backend's garnet.fast_forward (default: its own, partitions)")
    parser.add_argument("--backend", choices=("analytical", "garnet"), default="analytical",
                        help="garnet: issue 26's packet-backend cases (packet fidelity) instead")
    args = parser.parse_args()
    known = PACKET_CASES if args.backend == "garnet" else CASES
    cases = [c for c in known if not args.quick or c.quick]
    if args.cases:
        wanted = args.cases.split(",")
        unknown = set(wanted) - {c.name for c in known}
        if unknown:
            parser.error(f"unknown case(s) {', '.join(sorted(unknown))}; --list shows them")
        cases = [c for c in known if c.name in wanted]
    if args.list:
        for case in cases:
            print(f"{case.name}\t{case.npus} NPUs")
        return
    byte_compile_project()
    if args.backend == "garnet":
        print_packet_cases(cases, args.timeout, args.fast_forward)
        return
    astra_header = "ASTRA-sim s" if args.astra else "ASTRA-sim s (issue 15)"
    print(f"| case | NPUs | netsim s | netsim RSS MiB | {astra_header} | ASTRA-sim RSS MiB | netsim / ASTRA-sim | "
          f"simulated ns (netsim / ASTRA-sim) | events |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case in cases:
        row = run_case(case, args.astra, args.repeat, args.timeout)
        if row.get("error"):
            print(f"| {case.name} | {case.npus} | refused: {row['error'][0][-160:]} | - | {case.reference} | - | - | - "
                  f"| - |", flush=True)
            continue
        if row.get("timeout"):
            print(f"| {case.name} | {case.npus} | > {args.timeout:g} (stopped) | - | {case.reference} | - | - | - | - |",
                  flush=True)
            continue
        ratio = f"{row['ratio']:.2f}x" if "ratio" in row else "-"
        astra_s = f"{row['astra_s']:.2f}" if isinstance(row["astra_s"], float) else row["astra_s"]
        sim = f"{row['sim_time_ns']:.0f}" + (f" / {row['astra_time_ns']}" if row.get("astra_time_ns") else "")
        print(f"| {case.name} | {case.npus} | {row['netsim_s']:.2f} | {row['netsim_rss_MiB']} | {astra_s} | "
              f"{row.get('astra_rss_MiB', '-')} | {ratio} | {sim} | {row['events']} |", flush=True)


if __name__ == "__main__":
    main()
