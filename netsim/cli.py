"""The `netsim` command. Errors in the user's input print one line and exit 2; no traceback."""

from __future__ import annotations

import argparse
import copy
import functools
import json
import os
import signal
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import netsim
from netsim.config import (did_you_mean, non_negative_int, overrides_label, parse_override, positive_float,
                           positive_int, settings_of, toml_key)
from netsim.errors import ConfigError, NetsimError, NetsimWarning, interrupted_status
from netsim.network_config import BACKEND_NAMES, NetworkFile, load_network
from netsim.progress import RunMonitor, StopRequested, interruptible, make_view, showing, tick
from netsim.units import UnitError, format_size, format_time, parse_bandwidth, parse_size

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

DEFAULT_NETWORK = "torus-4x4"
DEFAULT_SYSTEM = "default"
DEFAULT_WORKLOAD = "Resnet50_DataParallel"
DEFAULT_SYNTH_NETWORK = "torus-8x8"
MAX_JOBS = 256  # --jobs at most this, or 4 per CPU if more
SYNTH_CHECK_CYCLES = 100  # synth looks for Ctrl-C (and refreshes progress) at least this often
COLLECTIVES = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast", "reduce", "gather", "scatter",
               "barrier")
TRANSFORMER_OPTIONS = (("--layers", 2, "transformer blocks"), ("--hidden", 1024, "hidden size"),
                       ("--sequence", 2048, "sequence length"), ("--micro-batch", 1, "micro-batch size"),
                       ("--tp", 1, "tensor parallel degree"), ("--pp", 1, "pipeline parallel degree"),
                       ("--dp", 1, "data parallel degree"), ("--micro-batches", 1, "micro-batches (pp > 1)"))
GEMM_MODEL_NPUS = 16  # workload gen --gemm --parallel MODEL: NPUs by default


def option(flag: str, parse, value):
    """`value` of command-line option `flag` read by a parser of netsim.config or netsim.units (e.g.
    positive_int, parse_size); a bad value is a one-line error naming the option."""
    try:
        return parse(value)
    except UnitError as exc:
        raise ConfigError(f"{flag}: {exc}") from None


# ---------------------------------------------------------------------------- overrides
def split_overrides(items: list[str]) -> tuple[list, list]:
    """Route each --set KEY=VALUE to the network or the system config (prefix 'network.'/'system.' to force)."""
    if not items:
        return [], []
    network_keys = {toml_key(f) for f in settings_of(NetworkFile)}
    network, system = [], []
    for item in items:
        path, value = parse_override(item)
        if path[0] == "network" and len(path) > 1:
            network.append((path[1:], value))
        elif path[0] == "system" and len(path) > 1:
            system.append((path[1:], value))
        elif path[0] in network_keys:
            network.append((path, value))
        elif path[0] in system_config_keys():
            system.append((path, value))
        else:
            raise ConfigError(f"--set {item}: unknown key '{path[0]}'"
                              f"{did_you_mean(path[0], network_keys | system_config_keys())} "
                              f"(network keys: {', '.join(sorted(network_keys))}; or a system key)")
    return network, system


@functools.cache
def system_config_keys() -> frozenset[str]:
    """The system config's top-level keys (the system layer is imported only for a key that is not
    the network's: a synth run never imports it)."""
    from system.config import SystemConfig

    return frozenset(toml_key(f) for f in settings_of(SystemConfig))


# ---------------------------------------------------------------------------- output
def output_dir(args, name: str) -> Path:
    """--out, else ./netsim-out/NAME (the run's name made one safe path component)."""
    from netsim.outputs import folder_name

    return Path(args.out) if args.out else Path.cwd() / "netsim-out" / folder_name(name)


def finish(args, console: Console, result, print_table, monitor: RunMonitor) -> int:
    """Write the run's folder, then print the summary (table, or JSON with --json).

    Returns the exit status: 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM) when a stop
    signal came (its partial results, or the whole result of a run that had ended, are written)."""
    from netsim import report
    from netsim.outputs import SUMMARY, write_outputs

    out_dir = output_dir(args, result.name)
    if (out_dir / SUMMARY).is_file() and not args.quiet:  # never replace a run without saying so
        print(f"netsim: warning: {out_dir} held an earlier run; replaced it with this one", file=sys.stderr)
    out = write_outputs(result.summary, result.tables, out_dir)
    if args.json:
        print(report.to_json(result.summary))
    elif not args.quiet:
        print_table(console, result)
        console.print(f"[dim]wrote {out}[/dim]")
    if not args.quiet:
        print_warnings(result.summary)
    if result.summary.get("partial"):
        print(f"netsim: interrupted; partial results written to {out}", file=sys.stderr)
        return 128 + (monitor.stop_signal or signal.SIGINT)
    if monitor.stop_signal:
        print(f"netsim: interrupted after the run had finished; its complete results are written to {out}",
              file=sys.stderr)
        return 128 + monitor.stop_signal
    return 0


def print_warnings(summary: dict) -> None:
    """The summary's warnings, one line each on stderr, as every netsim warning is printed
    (`print_warning`); stdout keeps the table or the JSON."""
    for warning in summary.get("warnings", []):
        print(f"netsim: warning: {warning}", file=sys.stderr)


def max_utilization_row(table: Table, summary: dict) -> None:
    """The busiest link's utilization, flagged when above 1 (see the warning below the table)."""
    peak = summary.get("max_link_utilization")
    if peak is not None:
        table.add_row("max link utilization", f"{peak:.3f}" + (" (OVER 1: see warning)" if peak > 1 else ""))


def cost_rows(table: Table, summary: dict) -> None:
    """Events and wall time, and the quotient torus a folded packet run was simulated on."""
    table.add_row("events / wall time", f"{summary['events']:,} / {summary['wall_time_s']:.2f} s")
    folded = summary.get("folded_to")
    if folded:
        shape = f"ring of {folded[0]}" if len(folded) == 1 else "torus " + "x".join(map(str, folded))
        table.add_row("simulated on", f"quotient {shape} (docs/scale.md)")


def print_run(console: Console, result) -> None:
    from rich.table import Table

    s = result.summary
    table = Table(title=f"netsim run: {s['workload']['name']} on {s['network']['name']} ({s['backend']})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("end-to-end time", format_time(s["end_to_end_time_ns"]))
    table.add_row("compute time (NPU 0)", format_time(s["compute_time_ns"]))
    table.add_row("exposed communication (NPU 0)", format_time(s["exposed_comm_time_ns"]))
    if "end_to_end" in result.tables:
        e2e = result.tables["end_to_end"]
        total_comm = e2e[[c for c in e2e.columns if c.endswith("_total_comm_ns")]].to_numpy().sum()
        table.add_row("total communication (NPU 0, sum of collectives)", format_time(total_comm))
    table.add_row("communication in flight (NPU 0)", format_time(s["comm_busy_time_ns"]))
    table.add_row("compute/communication overlap (NPU 0)",
                  f"{format_time(s['compute_comm_overlap_ns'])} ({s['overlap_fraction']:.1%} of comm)")
    if "pipeline_bubble_fraction" in s:
        table.add_row("pipeline bubble fraction (NPU 0)", f"{s['pipeline_bubble_fraction']:.4f}")
    finish_times = [t for t in s["npu_finish_time_ns"] if t is not None]
    if finish_times:
        table.add_row("NPU finish time min / max",
                      f"{format_time(min(finish_times))} / {format_time(max(finish_times))}")
    if s["partial"]:
        table.add_row("PARTIAL", f"interrupted at {format_time(s['simulated_time_ns'])}; "
                                 f"{len(s['npu_finish_time_ns']) - len(finish_times)} NPUs unfinished")
    max_utilization_row(table, s)
    table.add_row("slowest NPU", str(s["slowest_npu"]))
    if "passes" in s:
        table.add_row("passes", str(s["passes"]))
    else:
        table.add_row("trace nodes (all NPUs)", f"{s['workload']['nodes']:,}")
    cost_rows(table, s)
    console.print(table)
    print_links(console, result.tables["links"])


def print_collective(console: Console, result) -> None:
    from rich.table import Table

    if "sizes" in result.tables:
        print_collective_sizes(console, result)
        return
    s = result.summary
    table = Table(title=f"netsim collective: {s['collective']} of {format_size(s['size_bytes'])} on "
                        f"{s['network']['name']} ({s['backend']})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    if s["collective_time_ns"] is None:  # interrupted: no time, so no bandwidths
        table.add_row("PARTIAL", f"interrupted at {format_time(s['simulated_time_ns'])}; "
                                 f"{s['npus'] - s['npus_finished']} of {s['npus']} NPUs unfinished")
        table.add_row("collective time", f"unfinished (over {format_time(s['simulated_time_ns'])})")
        table.add_row("algorithm / bus bandwidth", "n/a (unfinished)")
    else:
        table.add_row("collective time", format_time(s["collective_time_ns"]))
        table.add_row("algorithm bandwidth", f"{s['algbw_GBps']:.3f} GB/s")
        table.add_row("bus bandwidth", f"{s['busbw_GBps']:.3f} GB/s")
    table.add_row("bytes sent (all NPUs)", f"{s['bytes_sent_total']:,}")
    if s.get("verified"):
        table.add_row("verified", f"yes: every NPU's result checked against the {s['collective']} of the inputs")
    max_utilization_row(table, s)
    cost_rows(table, s)
    console.print(table)
    print_links(console, result.tables["links"])


def print_collective_sizes(console: Console, result) -> None:
    """A --size range: one row per size, as nccl-tests prints it."""
    from rich.table import Table

    s = result.summary
    table = Table(title=f"netsim collective: {s['collective']} on {s['network']['name']} ({s['backend']}), "
                        f"{s['npus']} NPUs")
    for column in ("size", "time", "algbw (GB/s)", "busbw (GB/s)", "max link util."):
        table.add_column(column, justify="right")
    for row in result.tables["sizes"].itertuples():
        finished = not row.partial
        table.add_row(format_size(row.size_bytes), format_time(row.collective_time_ns) if finished else "unfinished",
                      f"{row.algbw_GBps:.3f}" if finished else "n/a", f"{row.busbw_GBps:.3f}" if finished else "n/a",
                      f"{row.max_link_utilization:.3f}")
    if s["partial"] or s["sizes"] < s["sizes_planned"]:
        table.add_row("PARTIAL", f"{s['sizes']} of {s['sizes_planned']} sizes", "", "", "")
    console.print(table)


def print_links(console: Console, links, top: int = 5) -> None:
    from rich.table import Table

    from netsim import report

    dims = report.per_dimension_utilization(links)
    table = Table(title="link utilization per dimension")
    for column in ("dim", "links", "bytes", "mean", "max", "imbalance"):
        table.add_column(column, justify="right")
    for row in dims.itertuples():
        table.add_row(str(row.dim), str(row.links), f"{row.bytes:,}", f"{row.mean_utilization:.3f}",
                      f"{row.max_utilization:.3f}", f"{row.imbalance:.2f}")
    console.print(table)
    busiest = report.busiest_links(links, top)
    table = Table(title=f"top {top} links")
    for column in ("link", "src", "dst", "kind", "dim", "bytes", "utilization"):
        table.add_column(column, justify="right")
    for row in busiest.itertuples():
        table.add_row(str(row.link_id), str(row.src), str(row.dst), row.kind, str(row.dim), f"{row.bytes:,}",
                      f"{row.utilization:.3f}")
    console.print(table)


# ---------------------------------------------------------------------------- simulations
def settings_header(network) -> str:
    """For the live view's header: a packet-backend network's settings in force on a line of their
    own (netsim.packet_settings); nothing for the analytical backends."""
    if network.backend != "garnet":
        return ""
    from netsim.budget import topology_within_budget
    from netsim.packet_settings import packet_settings, settings_line

    topology = topology_within_budget(network, f"a run on {network.name}")  # (a runaway network is refused unbuilt)
    return "\n" + settings_line(packet_settings(network.garnet, topology))


def run_scenario(args, monitor):
    """Run `args`' scenario and name its result by what ran: the network's name carries its own
    --set overrides (netsim.network_config.load_network); this adds the rest that changes the
    results (--backend, --algorithm, system and workload keys, a seed other than 0), so runs
    with different settings get different names and default folders."""
    result = args.scenario(args, monitor)
    settings = [(["backend"], args.backend)] if getattr(args, "backend", None) else []
    if getattr(args, "algorithm", None):
        settings.append((["algorithm"], args.algorithm))
    workload_items = [item for item in args.set if item.startswith("workload.")]
    _, system_overrides = split_overrides([item for item in args.set if item not in workload_items])
    settings += system_overrides + [parse_override(item) for item in workload_items]
    if args.seed:
        settings.append((["seed"], args.seed))
    label = overrides_label(settings)
    if label:
        result.name += label
        result.summary["name"] = result.name
    return result


# A scenario turns parsed arguments into a RunResult under a monitor; `netsim sweep` runs the same
# scenarios for each point of a study, so a point behaves exactly like the command line it stands for.
def scenario_run(args, monitor):
    from netsim.runner import run_training
    from system import load_system
    from workload import load_workload, with_overrides
    from workload.chakra import is_trace_spec

    workload_items = [(".".join(path[1:]), value) for path, value in
                      (parse_override(item) for item in args.set if item.startswith("workload."))]
    network_overrides, system_overrides = split_overrides([i for i in args.set if not i.startswith("workload.")])
    network = load_network(args.network, network_overrides, args.backend)
    system = load_system(args.system, system_overrides)
    passes = option("--passes", positive_int, args.passes)
    if is_trace_spec(args.workload):
        return trace_run(args, monitor, network, system, workload_items, passes)
    for flag, value in (("--comm-groups", args.comm_groups), ("--memory", args.memory)):
        if value is not None:
            raise ConfigError(f"{flag} applies to Chakra traces; {args.workload} is not one")
    workload = with_overrides(load_workload(args.workload), workload_items)
    monitor.title = f"netsim run: {workload.name} on {network.name} ({network.backend})" + settings_header(network)
    return run_training(network, system, workload, passes=passes, seed=args.seed, monitor=monitor)


def collective_sizes(kind: str, size: str | None) -> list[int]:
    """--size as a list of sizes: one ('64MiB'), or a range 'FROM:TO' stepping x2 ('FROM:TO:F', xF),
    as nccl-tests' -b/-e/-f. A barrier has one size, 0."""
    if kind == "barrier":
        return [0]
    if size is None:
        raise ConfigError(f"--size is required for {kind}, e.g. --size 64MiB (or a range 1KiB:1GiB)")
    parts = size.split(":")
    if len(parts) > 3:
        raise ConfigError(f"--size {size}: expected SIZE, FROM:TO or FROM:TO:FACTOR, e.g. 1KiB:1GiB")
    low = option("--size", parse_size, parts[0])
    high = option("--size", parse_size, parts[1]) if len(parts) > 1 else low
    if len(parts) < 3:
        factor = 2
    else:
        factor = int(parts[2]) if parts[2].isdecimal() else 0  # not a whole number: refused below
    if low < 1 or high < low or factor < 2:
        raise ConfigError(f"--size {size}: expected sizes of at least 1 byte, FROM <= TO and a FACTOR >= 2")
    sizes = [low]
    while sizes[-1] * factor <= high:
        sizes.append(sizes[-1] * factor)
    return sizes


def trace_run(args, monitor, network, system, workload_items: list, passes: int):
    """`netsim run` of a Chakra trace: its options are --comm-groups, --memory and workload.in-flight."""
    from netsim.runner import run_trace
    from workload.chakra import load_comm_groups, load_memory

    if passes != 1:
        raise ConfigError(f"--passes {passes}: a Chakra trace runs its graph once (convert a workload with "
                          f"'netsim workload to-chakra --passes {passes}' to trace several iterations)")
    in_flight = 0
    for key, value in workload_items:
        if key != "in-flight":
            raise ConfigError(f"--set workload.{key}: a Chakra trace takes one workload option, in-flight (nodes an "
                              f"NPU runs at once per engine; 0 = no limit, ASTRA-sim 2.x: 1)")
        in_flight = option("--set workload.in-flight", non_negative_int, value)
    groups = load_comm_groups(args.comm_groups) if args.comm_groups else None
    memory = load_memory(args.memory) if args.memory else None
    monitor.title = (f"netsim run: Chakra trace {args.workload} on {network.name} ({network.backend})"
                     + settings_header(network))
    return run_trace(network, system, args.workload, comm_groups=groups, memory=memory, in_flight=in_flight,
                     seed=args.seed, monitor=monitor)


def scenario_collective(args, monitor):
    """One collective, or one per size of a --size range (the sizes table, nccl-tests style)."""
    from netsim.runner import RunResult, run_collective
    from system import load_system
    from system.config import algorithm_list

    sizes = collective_sizes(args.kind, args.size)
    network_overrides, system_overrides = split_overrides(args.set)
    if args.algorithm is not None:
        option("--algorithm", algorithm_list, args.algorithm)
        if args.kind not in ("all-reduce", "reduce-scatter", "all-gather", "all-to-all"):
            raise ConfigError(f"--algorithm: {args.kind} has a fixed algorithm; --algorithm applies to "
                              f"all-reduce, reduce-scatter, all-gather and all-to-all")
        system_overrides.append(([f"{args.kind}-implementation"], args.algorithm))
    network = load_network(args.network, network_overrides, args.backend)
    system = load_system(args.system, system_overrides)
    results = []
    header = settings_header(network)
    for nbytes in sizes:
        monitor.restart(f"netsim collective: {args.kind} of {format_size(nbytes)} on {network.name} "
                        f"({network.backend})" + (f", size {len(results) + 1} of {len(sizes)}" if len(sizes) > 1
                                                  else "") + header, None)
        results.append(run_collective(network, system, args.kind, nbytes, seed=args.seed, verify=args.verify,
                                      monitor=monitor))
        if monitor.interrupted:
            break
    if len(sizes) == 1:
        return results[0]
    import pandas as pd

    rows = [{key: result.summary[key] for key in SIZES_COLUMNS} for result in results]
    last = results[-1].summary
    busiest = max(results, key=lambda r: r.summary["max_link_utilization"])
    name = f"{args.kind}-{sizes[0]}B-{sizes[-1]}B-{network.name}"
    summary = {"name": name, "collective": args.kind, "npus": last["npus"], "sizes": len(results),
               "sizes_planned": len(sizes), **{key: last[key] for key in ("backend", "seed", "network", "system")},
               "partial": bool(last["partial"]) or len(results) < len(sizes),  # stopped before the last size
               "wall_time_s": sum(r.summary["wall_time_s"] for r in results),
               "events": sum(r.summary["events"] for r in results),
               "simulated_time_ns": sum(r.summary["simulated_time_ns"] for r in results),
               # the busiest link over the sizes (the first size among equals), and its id
               **{key: busiest.summary[key] for key in ("max_link_utilization", "max_link_utilization_link")},
               "peak_interval_link_utilization": max(r.summary["peak_interval_link_utilization"] for r in results),
               "warnings": [f"at size {format_size(r.summary['size_bytes'])}: {w}" for r in results
                            for w in r.summary["warnings"]]}
    return RunResult(name, summary, {"sizes": pd.DataFrame(rows, columns=list(SIZES_COLUMNS))})


SIZES_COLUMNS = ("size_bytes", "collective_time_ns", "algbw_GBps", "busbw_GBps", "max_link_utilization",
                 "bytes_sent_total", "npus_finished", "partial")


def scenario_synth(args, monitor):
    """Synthetic traffic on the packet backend: one offered load, or a sweep up to saturation (each
    load shown in progress as it runs). Ctrl-C reports what was simulated, marked partial. (pandas
    and the runner's reports are imported once the simulation is done: scripts/bench_startup.py.)"""
    from netsim import traffic
    from netsim.garnet.stats import latency_table

    network_overrides, _ = split_overrides(args.set)
    network = load_network(args.network, network_overrides, "garnet")
    header = settings_header(network)
    conventions = {"include_source": args.include_source,
                   "injection_delay": option("--injection-delay", non_negative_int, args.injection_delay)}

    def watch(run: traffic.SynthRun, label: str) -> None:
        """Show `run` in the progress view, and let Ctrl-C stop it."""
        clock = run.network.clock
        monitor.restart(f"netsim synth: {args.pattern} {label} on {network.name}{header}",
                        lambda net: run.progress(), messages=False)  # (its packets are in the text)
        tick(run.network, clock.ns(max(1, min(run.end // 200, SYNTH_CHECK_CYCLES))), monitor)

    partial = False
    if args.sweep and args.rate is not None:
        raise ConfigError("--rate: a sweep chooses its loads (from 0.05 up to saturation); give --rate or --sweep")
    for line in synth_budget_warnings(args, network):
        monitor.note(line)
    if args.sweep:
        points = []
        watched: list[traffic.SynthRun] = []  # the run of the load being measured
        highest = None  # the run of the highest load measured so far (the summary's link figures)

        def watch_sweep(run: traffic.SynthRun, label: str) -> None:
            watched[:] = [run]
            watch(run, label)

        try:
            for point in traffic.sweep_points(network, args.pattern, args.packet_flits, args.cycles, args.seed,
                                              warmup_cycles=args.warmup, watch=watch_sweep, **conventions):
                if not points or point["rate"] > max(p["rate"] for p in points):
                    highest = watched[0]
                points.append(point)
        except StopRequested:  # Ctrl-C: the loads measured so far
            partial = True
        import pandas as pd

        points.sort(key=lambda p: p["rate"])
        # the highest load's figures, with totals over the loads (the zero-load calibration run left out)
        summary = dict(points[-1]) if points else {}
        summary.update({"saturation_load": traffic.saturation_load(points),
                        "saturation": traffic.sweep_saturation(points).text(), "sweep_points": len(points),
                        "warnings": [f"at rate {p['rate']:g}: {w}" for p in points for w in p["warnings"]],
                        "wall_time_s": sum(p["wall_time_s"] for p in points),
                        "events": sum(p["events"] for p in points)})
        tables = {"sweep": pd.DataFrame(points).drop(columns="warnings", errors="ignore")}  # in the summary
        # link figures of the highest load (no time series is kept per load: no peak interval)
        measured, link_tables = highest, {"links": highest.network.link_stats()} if highest else {}
    else:
        if args.rate is None:
            raise ConfigError("netsim synth: give --rate LOAD (flits/node/cycle) or --sweep")
        run = traffic.SynthRun(network, args.pattern, args.rate, args.packet_flits, args.cycles, args.seed,
                               args.warmup, **conventions)
        watch(run, f"at {args.rate:g}")
        try:
            summary = run.execute()
        except StopRequested:  # Ctrl-C: report the cycles simulated so far
            summary = run.summary(run.network.clock.now_cycle())
            partial = True
        monitor.finish(run.network)
        # plain columns, written without pandas (netsim.csv_text): importing it took half of a small run
        tables = {"links": run.network.link_columns(), "link_timeseries": monitor.sampler.columns(),
                  "packet_latency": latency_table(run.window.stats.histogram)}
        measured, link_tables = run, tables
    from netsim.runner import RunResult, network_summary

    name = f"synth-{args.pattern}-{network.name}" + ("-sweep" if args.sweep else f"-{args.rate:g}")
    # what every command's summary has (simulated time, link loading, configs), then synth's own figures
    common = {} if measured is None else network_summary(measured.network, network, None, 0.0, args.seed, partial,
                                                         link_tables, monitor.notes)
    summary = {"name": name, "pattern": args.pattern, "packet_flits": args.packet_flits, **common, **summary,
               "backend": "garnet", "partial": partial, "seed": args.seed, "cycle_ns": 1.0 / network.garnet.clock_ghz,
               "network": {"name": network.name, "path": network.path,
                           "topology": network.build_topology().summary(), "config": network.table}}
    return RunResult(name, summary, tables)


def synth_budget_warnings(args, network) -> list[str]:
    """What a synth run will move (netsim.budget), before anything is built: every NPU offers --rate
    flits a cycle (a sweep, 0.05 at least) over the warm-up and measured cycles, each at least one hop;
    a warm-up or cycle count past units.MAX_CYCLES is refused."""
    from netsim.budget import Budget
    from netsim.units import MAX_CYCLES

    for flag, value in (("--cycles", args.cycles), ("--warmup", args.warmup)):
        if value is not None and value > MAX_CYCLES:
            raise ConfigError(f"{flag} {value}: at most {MAX_CYCLES:g} cycles")
    cycles = args.cycles + (args.cycles // 5 if args.warmup is None else args.warmup)
    rate = 0.05 if args.rate is None else args.rate
    budget = Budget(network.npus, 0, rate * network.npus * cycles, network.garnet.fidelity)
    return budget.check(f"this synth of {cycles:,} cycles (warm-up included)")


def cmd_simulate(args, console: Console) -> int:
    """run, collective and synth: the scenario under a progress monitor, then the output folder."""
    from netsim.outputs import prepare

    option("--seed", non_negative_int, args.seed)
    prepare(Path(args.out) if args.out else Path.cwd() / "netsim-out")
    monitor = RunMonitor(f"netsim {args.command}", make_view(args.quiet))
    with interruptible(monitor):  # through the writing: a stop once the run has ended waits for its outputs
        with showing(monitor.view):
            result = run_scenario(args, monitor)
        return finish(args, console, result, args.printer, monitor)


def print_synth(console: Console, result) -> None:
    from rich.table import Table

    s = result.summary
    table = Table(title=f"netsim synth: {s['pattern']} on {s['network']['name']}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in ("offered_load", "accepted_load", "avg_packet_latency_cycles", "p99_packet_latency_cycles",
                "avg_network_latency_cycles", "avg_hops", "saturation_load", "saturation", "wall_time_s"):
        if key in s and s[key] is not None:
            value = s[key]
            table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    console.print(table)


def cmd_workload_gen(args, console: Console) -> None:
    """Write a workload (legacy text + TOML) from a GEMM CSV or transformer dimensions."""
    from workload.generator import from_gemm_csv, transformer, write
    from workload.roofline import Roofline

    # each option applies to one kind of workload (its default is filled in here, so that one given to
    # the other kind is refused rather than ignored)
    shape = {flag: getattr(args, flag[2:].replace("-", "_")) for flag, _, _ in TRANSFORMER_OPTIONS}
    if args.gemm:
        given = [flag for flag, value in shape.items() if value is not None]
        if given:
            raise ConfigError(f"{given[0]}: applies to transformer workloads (without --gemm); --gemm takes "
                              f"--parallel and --npus")
        parallel = (args.parallel or "DATA").upper()
        if args.npus is not None and parallel != "MODEL":
            raise ConfigError(f"--npus: applies to --gemm with --parallel MODEL (a {parallel} workload runs on "
                              f"the network's NPUs)")
    elif args.parallel is not None or args.npus is not None:
        raise ConfigError(f"{'--parallel' if args.parallel is not None else '--npus'}: applies to --gemm; a "
                          f"transformer takes --tp, --pp and --dp")
    counts = {flag[2:].replace("-", "_"): option(flag, positive_int, default if shape[flag] is None else shape[flag])
              for flag, default, _ in TRANSFORMER_OPTIONS}
    bytes_per_element = option("--bytes-per-element", positive_int, args.bytes_per_element)
    roofline = Roofline(option("--peak-tflops", positive_float, args.peak_tflops),
                        option("--memory-bandwidth", parse_bandwidth, args.memory_bandwidth), bytes_per_element)
    if args.gemm:
        npus = option("--npus", positive_int, GEMM_MODEL_NPUS if args.npus is None else args.npus)
        workload = from_gemm_csv(Path(args.gemm), parallel, npus, roofline)
    else:
        workload = transformer(roofline=roofline, **counts)  # the options are named as its parameters
    legacy, toml = write(workload, Path(args.out or "."))
    if not args.quiet:
        console.print(f"{workload.name}: {len(workload.layers)} layers, loop {workload.parallelism}; "
                      f"wrote {legacy} and {toml}")


def cmd_workload_to_chakra(args, console: Console) -> None:
    """Convert a legacy or TOML workload into Chakra traces for a network (its NPUs and dimensions)."""
    from workload import load_workload, with_overrides
    from workload.chakra import write_chakra
    from workload.chakra.write import trace_stem

    items = [parse_override(item) for item in args.set]
    bad = [item for item, (path, _) in zip(args.set, items) if path[0] != "workload"]
    if bad:
        raise ConfigError(f"--set {bad[0]}: to-chakra takes workload options only (workload.KEY=VALUE); the network "
                          f"is given by --network")
    workload = with_overrides(load_workload(args.workload), [(".".join(path[1:]), value) for path, value in items])
    network = load_network(args.network)
    passes = option("--passes", positive_int, args.passes)
    out = Path(args.out or f"chakra-{trace_stem(workload)}")
    written = write_chakra(workload, network.build_topology(), out, passes)
    traces = [path for path in written if path.suffix == ".et"]
    groups = [path for path in written if path.suffix == ".json"]
    if args.json:
        print(json.dumps({"traces": [str(p) for p in traces], "comm_groups": str(groups[0]) if groups else None}))
    elif not args.quiet:
        stem = trace_stem(workload)
        run = f"netsim run --workload {out / stem} --network {args.network}"
        run += f" --comm-groups {groups[0]}" if groups else ""
        console.print(f"{workload.name}: wrote {len(traces)} traces ({stem}.0.et ... "
                      f"{stem}.{len(traces) - 1}.et) into {out}")
        console.print(f"run them with: {run}", soft_wrap=True, markup=False)


def cmd_topo(args, console: Console) -> None:
    """A topology's summary; on the packet backend (its config's, or --backend garnet) with the
    packet settings in force (netsim.packet_settings)."""
    from rich.table import Table

    network_overrides, _ = split_overrides(args.set)
    config = load_network(args.network, network_overrides, args.backend)
    topology = config.build_topology()
    summary = topology.summary()
    if config.backend == "garnet":
        from netsim.packet_settings import packet_settings

        summary["packet_settings"] = packet_settings(config.garnet, topology)
    if args.json:
        from netsim import report

        print(report.to_json(summary))
        return
    table = Table(title=f"topology {summary['name']} ({summary['kind']})")
    table.add_column("property")
    table.add_column("value", justify="right")
    for key in ("npus", "switches", "links", "diameter_hops"):
        table.add_row(key.replace("_", " "), str(summary[key]))
    table.add_row("bisection bandwidth", f"{summary['bisection_bandwidth_GBps']:g} GB/s")
    for index, dim in enumerate(summary["dims"]):
        table.add_row(f"dimension {index}", dim)
    for group in summary["link_groups"]:
        table.add_row("links", group)
    for key, value in summary.get("packet_settings", {}).items():
        shown = "-".join(map(str, value)) if isinstance(value, list) else f"{value:g}" if isinstance(value, float) \
            else str(value)
        table.add_row(f"packet backend: {key}", shown)
    console.print(table)


def bundled_configs() -> dict[str, dict[str, str]]:
    """Every bundled network, system and workload, by name, with a line on what it is."""
    from netsim.bundled import bundled_names
    from netsim.network_config import NETWORK_SUFFIXES
    from system import load_system
    from system.config import SYSTEM_SUFFIXES
    from workload import WORKLOAD_SUFFIXES, load_workload

    forms = {".toml": "netsim TOML", ".txt": "ASTRA-sim legacy text", ".json": "ASTRA-sim 2.x JSON"}
    networks = {}
    for name in bundled_names("topologies", NETWORK_SUFFIXES):
        network = load_network(name)
        networks[name] = f"{network.table.get('description') or network.topology_kind} ({network.backend})"
    systems = {}
    for name, path in bundled_names("system.configs", SYSTEM_SUFFIXES).items():
        config = load_system(name)
        algorithms = config.all_reduce[0] if len(set(config.all_reduce)) == 1 else " / ".join(config.all_reduce)
        systems[name] = (f"all-reduce {algorithms}, {config.preferred_dataset_splits} chunks, "
                         f"{config.scheduling_policy} ({forms[path.suffix]})")
    workloads = {}
    for name in bundled_names("workload.data", WORKLOAD_SUFFIXES):
        workload = load_workload(name)
        count = len(workload.layers)
        workloads[name] = f"{workload.parallelism} loop, {count} layer{'s' if count > 1 else ''} (ASTRA-sim sample)"
    return {"networks": networks, "systems": systems, "workloads": workloads}


def declared_tables() -> dict[str, type]:
    """Every config table whose keys are declared (netsim.config.setting), by the name a reader
    knows it by: the network file, its [topology] per kind, [garnet], and the system config."""
    from netsim.garnet.config import GarnetConfig
    from netsim.topology import TOPOLOGY_KINDS, LevelSpec
    from system.config import SystemConfig

    kinds: dict[type, list[str]] = {}
    for kind, entry in TOPOLOGY_KINDS.items():
        kinds.setdefault(entry.spec, []).append(kind)
    tables = {"network": NetworkFile}
    for spec, names in kinds.items():
        tables[f"topology (kind = {' or '.join(names)})"] = spec
        if "hierarchical" in names:
            tables["topology.dims (each [[topology.dims]] of a hierarchical network)"] = LevelSpec
    return {**tables, "garnet": GarnetConfig, "system": SystemConfig}


def cmd_list(args, console: Console) -> None:
    """`netsim list`: the bundled configs, usable by name with --network, --system and --workload;
    with --keys, every config key with its unit, default and meaning (netsim.config_keys)."""
    from rich.table import Table

    if args.keys:
        from rich.markup import escape

        from netsim.config_keys import COLUMNS, config_keys

        rows = config_keys(declared_tables())
        if args.json:
            print(json.dumps(rows, indent=2))
            return
        for table_name in dict.fromkeys(row["table"] for row in rows):
            table = Table(title=escape(f"[{table_name}]"))
            for column in COLUMNS[1:]:
                table.add_column(column)
            for row in rows:
                if row["table"] == table_name:
                    table.add_row(*(escape(row[column]) for column in COLUMNS[1:]))
            console.print(table)
        return
    configs = bundled_configs()
    if args.json:
        print(json.dumps(configs, indent=2))
        return
    for kind, entries in configs.items():
        table = Table(title=f"bundled {kind} (--{kind[:-1]} NAME)")
        table.add_column("name")
        table.add_column("what it is")
        for name, text in entries.items():
            table.add_row(name, text)
        console.print(table)


def print_study(console: Console, frame, varied: list[str], metric: str, limit: int = 40) -> None:
    """A study's results as a table: its varied parameters, status and headline metric (the first
    `limit` points; the CSV has them all)."""
    from rich.table import Table

    table = Table(title=f"{len(frame)} points: {metric}")
    for column in ("point", *varied, "status", metric, "folder"):
        table.add_column(column, justify="right")
    for row in frame.head(limit).to_dict("records"):
        value = row.get(metric)
        if row["status"] != "ok":
            shown = row["error"][:60]
        elif metric.endswith("_ns") and isinstance(value, (int, float)):
            shown = format_time(value)
        else:
            shown = f"{value:,.4g}" if isinstance(value, float) else str(value)
        table.add_row(str(row["point"]), *(str(row.get(key, "")) for key in varied), row["status"], shown,
                      str(row.get("folder", "")))
    if len(frame) > limit:
        table.add_row("...", *([""] * len(varied)), "", f"{len(frame) - limit} more in the CSV", "")
    console.print(table)


def report_study(args, console: Console, path: Path) -> None:
    """`netsim report` of a sweep's results: a flat CSV beside them, a table, and with --plot the
    headline metric against the varied parameters."""
    from netsim.outputs import write_table
    from netsim.sweep import headline_metric, results_frame, study_results, varied_keys

    results = study_results(path)
    frame = results_frame(results)
    if frame.empty:
        raise ConfigError(f"{results}: no points in these results yet")
    varied = varied_keys(results)
    metric = headline_metric(frame, args.metric)
    csv = results.with_name(results.name.removesuffix(".jsonl") + ".csv")
    write_table(frame, csv)
    written = [csv]
    if args.plot:
        from netsim.plots import write_study_plot

        # the default metric's plot is STUDY.results.png; another metric's is named by it (not written over)
        png = csv.with_suffix(".png") if args.metric is None else csv.with_name(f"{csv.stem}.{metric}.png")
        written.append(write_study_plot(frame, varied, metric, png))
    if args.json:
        print(frame.to_json(orient="records", indent=2))
        return
    print_study(console, frame, varied, metric)
    for path_written in written:
        console.print(f"[dim]wrote {path_written}[/dim]")


def cmd_report(args, console: Console) -> None:
    """A run's folder as a terminal report: summary, per-dimension utilization, busiest links and
    most congested ports; with --plot, PNGs beside the CSVs. A sweep's results (the .jsonl file, or
    a study's folder) get report_study."""
    from rich.table import Table

    out_dir = Path(args.dir)
    top = option("--top", positive_int, args.top)
    if args.share is not None and (args.plot or args.json):
        raise ConfigError(f"--share writes a copy and no report: give {'--plot' if args.plot else '--json'} in a "
                          f"report of its own")
    if out_dir.suffix == ".jsonl" or (out_dir.is_dir() and not (out_dir / "summary.json").exists()
                                      and any(out_dir.glob("*.results.jsonl"))):
        if args.share is not None:
            raise ConfigError("--share applies to a run's output folder, not to a sweep's results")
        report_study(args, console, out_dir)
        return
    if args.metric is not None:
        raise ConfigError("--metric applies to a sweep's results (a .results.jsonl file or its folder)")
    from netsim.outputs import load_output, share

    if args.share is not None:
        shared = share(out_dir, Path(args.share), Path.cwd())
        if not args.quiet:
            console.print(f"wrote {shared}: a copy of {out_dir} with the input files' paths made relative")
        return

    summary, tables = load_output(out_dir)
    if args.plot:
        from netsim.plots import write_plots

        written = write_plots(out_dir, summary, tables)
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    title = f"netsim report: {summary.get('name', args.dir)}" + (" (PARTIAL)" if summary.get("partial") else "")
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        if isinstance(value, (int, float, str, bool)):
            table.add_row(key, f"{value:,.3f}" if isinstance(value, float) else str(value))
    console.print(table)
    print_warnings(summary)
    if "links" in tables:
        print_links(console, tables["links"], top)
        print_ports(console, tables["links"], top)
    if args.plot:
        for path in written:
            console.print(f"[dim]wrote {path}[/dim]")


def print_ports(console: Console, links, top: int) -> None:
    from rich.table import Table

    from netsim import report

    ports = report.congested_ports(links, top)
    if ports.empty:
        console.print("[dim]no buffer statistics (the analytical backend models no buffers)[/dim]")
        return
    table = Table(title=f"top {top} congested input ports (receiving end of a link)")
    for column in ("link", "src", "dst", "dim", "credit stall", "mean flits", "max VC flits"):
        table.add_column(column, justify="right")
    for row in ports.itertuples():
        table.add_row(str(row.link_id), str(row.src), str(row.dst), str(row.dim), format_time(row.credit_stall_time_ns),
                      f"{row.mean_buffer_flits:.2f}", f"{row.max_vc_flits:g}")
    console.print(table)


def cmd_sweep(args, console: Console) -> int:
    """Run a study's points in parallel (or on a Dask cluster), appending each result as it finishes;
    then print the results table."""
    from netsim.sweep import headline_metric, load_study, results_frame, run_study, varied_keys

    study = load_study(Path(args.study))
    jobs = None if args.jobs is None else option("--jobs", positive_int, args.jobs)
    most = max(MAX_JOBS, 4 * (os.cpu_count() or 1))
    if jobs is not None and jobs > most:
        raise ConfigError(f"--jobs {jobs}: at most {most} worker processes (each is a Python process of its own)")
    counts = run_study(study, jobs, args.scheduler, make_view(args.quiet))
    if args.json:
        print(json.dumps(counts, indent=2))
    elif not args.quiet:
        frame = results_frame(study.results)
        if not frame.empty and frame["status"].eq("ok").any():
            print_study(console, frame, varied_keys(study.results), headline_metric(frame))
        console.print(f"{counts['points']} points: {counts['skipped']} already done, {counts['ok']} ok, "
                      f"{counts['failed']} failed; results in {counts['results']} "
                      f"(netsim report {counts['results']} --plot: a CSV and a plot)")
    if counts["interrupted"]:
        print(f"netsim: interrupted; finished points are in {counts['results']} (rerun to resume)", file=sys.stderr)
        return 128 + (counts["stop_signal"] or signal.SIGINT)
    if counts["failed"]:
        print(f"netsim: {counts['failed']} of {counts['points']} points failed (their errors are in "
              f"{counts['results']}; a rerun retries them)", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------- parser
COMMON_OPTIONS = {  # name: (argparse keywords, value when a command does not take it)
    "set": ({"action": "append", "metavar": "KEY=VALUE",
             "help": "override a config key, e.g. garnet.vcs=4 or endpoint-delay=10ns (repeatable)"}, []),
    "seed": ({"type": int, "help": "random seed (same inputs and seed, same results)"}, 0),
    "quiet": ({"action": "store_true", "help": "print nothing but errors"}, False),
    "json": ({"action": "store_true", "help": "print the result as JSON on stdout"}, False),
    "out": ({"help": "output folder (default ./netsim-out/<name>)"}, None),
}


def common(parser: argparse.ArgumentParser, *options: str) -> None:
    """Add the shared options a command uses (all of COMMON_OPTIONS when none are named): a command
    takes no option it would ignore; the others read as their defaults."""
    chosen = options or tuple(COMMON_OPTIONS)
    for name in chosen:
        keywords, default = COMMON_OPTIONS[name]
        parser.add_argument(f"--{name}", default=copy.copy(default), **keywords)
    parser.set_defaults(**{name: copy.copy(default) for name, (_, default) in COMMON_OPTIONS.items()
                           if name not in chosen})


POSITIONAL = {"collective": ("kind",)}  # options given by position, per command


def command_line(params: dict, parser: argparse.ArgumentParser | None = None) -> list[str]:
    """The netsim command line that `params` stand for: `command`, then each option of that command
    by its name (`size`, `backend`, `packet-flits`, ...), and any other key as --set KEY=VALUE (a
    network, system or `workload.` key). Sweep points and the Python API run their scenarios so."""
    params = dict(params)
    command = params.pop("command")
    parser = parser or build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]  # argparse keeps subparsers here
    options = {action.dest: action for action in sub._actions if action.option_strings}
    argv = [command] + [str(params.pop(name)) for name in POSITIONAL.get(command, ()) if name in params]
    for key, value in params.items():
        action = options.get(key.replace("-", "_"))
        if action is None or action.dest in ("help", "set", "seed", "out", "json", "quiet"):
            argv += set_option(key, value)
        elif isinstance(value, bool):
            argv += [action.option_strings[0]] if value else []
        else:
            argv += [action.option_strings[0], str(value)]
    return argv


def set_option(key: str, value) -> list[str]:
    """--set KEY=VALUE for a config key and a Python value (numbers, booleans, lists as TOML reads them)."""
    return ["--set", f"{key}={value if isinstance(value, str) else json.dumps(value)}"]


class OneLineParser(argparse.ArgumentParser):
    """A parser whose errors raise ConfigError: one line naming the option and what it expects, and
    where the usage is, instead of argparse's usage text."""

    def error(self, message: str):
        raise ConfigError(f"{message} (see '{self.prog} --help')")


class VersionAction(argparse.Action):
    """--version: netsim's version and which packet core runs (compiled, or the pure-Python source)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from netsim.garnet import core

        print(f"netsim {netsim.__version__} (packet core: {core.describe()})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The `netsim` command line (its errors are one line: OneLineParser)."""
    parser = OneLineParser(prog="netsim", description="Packet-level network simulation for distributed training.")
    parser.add_argument("--version", action=VersionAction, nargs=0, help="show netsim's version and which packet core runs")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="simulate training iterations of a workload")
    run.add_argument("--network", default=DEFAULT_NETWORK, help=f"bundled network name or file (default {DEFAULT_NETWORK})")
    run.add_argument("--system", default=DEFAULT_SYSTEM, help=f"bundled system config or file (default {DEFAULT_SYSTEM})")
    run.add_argument("--workload", default=DEFAULT_WORKLOAD,
                     help=f"bundled workload, workload file, or Chakra traces: a folder or PREFIX of PREFIX.<rank>.et "
                          f"files (default {DEFAULT_WORKLOAD})")
    run.add_argument("--backend", choices=BACKEND_NAMES, help="override the network config's backend")
    run.add_argument("--passes", type=int, default=1, help="training iterations to simulate (default 1)")
    run.add_argument("--comm-groups", help="Chakra traces: communicator groups named by pg_name (ASTRA-sim's "
                                           "communicator-group JSON)")
    run.add_argument("--memory", help="Chakra traces: remote memory for MEM_LOAD/MEM_STORE nodes (ASTRA-sim's "
                                      "remote-memory JSON)")
    common(run)
    run.set_defaults(handler=cmd_simulate, scenario=scenario_run, printer=print_run)

    coll = commands.add_parser("collective", help="time one collective on every NPU")
    coll.add_argument("kind", choices=COLLECTIVES)
    coll.add_argument("--size", help="bytes per NPU, e.g. 64MiB (all-gather and gather: each NPU's shard; "
                                     "barrier: none), or a range FROM:TO[:FACTOR] run size by size, x2 by "
                                     "default (e.g. 1KiB:1GiB; writes sizes.csv)")
    coll.add_argument("--network", default=DEFAULT_NETWORK)
    coll.add_argument("--system", default=DEFAULT_SYSTEM)
    coll.add_argument("--algorithm", help="algorithm per dimension, e.g. ring or ring_ring")
    coll.add_argument("--backend", choices=BACKEND_NAMES)
    coll.add_argument("--verify", action="store_true",
                      help="carry real payloads and check every NPU's result (sizes up to a few MiB)")
    common(coll)
    coll.set_defaults(handler=cmd_simulate, scenario=scenario_collective, printer=print_collective)

    synth = commands.add_parser("synth", help="synthetic traffic on the packet backend (latency vs load)")
    synth.add_argument("--network", default=DEFAULT_SYNTH_NETWORK, help=f"default {DEFAULT_SYNTH_NETWORK}")
    synth.add_argument("--pattern", required=True, help="uniform, transpose, tornado, bit-complement, bit-reverse, "
                                                        "shuffle, neighbour, hotspot, bad-dragon (a dragonfly's next group) or "
                                                        "random-permutation (BookSim's randperm from --seed)")
    synth.add_argument("--rate", type=float, help="offered load in flits/node/cycle")
    synth.add_argument("--packet-flits", type=int, default=4, help="flits per packet (default 4)")
    synth.add_argument("--cycles", type=int, default=10000, help="measured cycles (default 10000)")
    synth.add_argument("--warmup", type=int, help="warm-up cycles before measuring (default: a fifth of --cycles)")
    synth.add_argument("--sweep", action="store_true", help="walk offered load up to saturation")
    synth.add_argument("--include-source", action="store_true",
                       help="BookSim's convention: uniform and hotspot may pick the source itself, permutations keep "
                            "their fixed points (else no NPU sends to itself)")
    synth.add_argument("--injection-delay", type=int, default=0, metavar="CYCLES",
                       help="cycles each packet waits at its source before injection (1: BookSim's extra cycle; "
                            "default 0)")
    common(synth)
    synth.set_defaults(handler=cmd_simulate, scenario=scenario_synth, printer=print_synth)

    listing = commands.add_parser("list", help="the bundled networks, systems and workloads, with descriptions")
    listing.add_argument("--keys", action="store_true",
                         help="list every config key instead, with its unit, default and meaning")
    common(listing, "json")
    listing.set_defaults(handler=cmd_list)

    topo = commands.add_parser("topo", help="summarise a topology")
    topo.add_argument("network", help="bundled network name or file")
    topo.add_argument("--backend", choices=BACKEND_NAMES, help="override the network config's backend (garnet: "
                                                               "show the packet settings in force)")
    common(topo, "set", "json")
    topo.set_defaults(handler=cmd_topo)

    rep = commands.add_parser("report", help="summarise a run's output folder, or a sweep's results")
    rep.add_argument("dir", help="a run's output folder, a sweep's STUDY.results.jsonl, or the study's folder")
    rep.add_argument("--top", type=int, default=5, help="how many of the busiest links and ports to list")
    rep.add_argument("--plot", action="store_true", help="write PNG plots into DIR (needs netsim[plot])")
    rep.add_argument("--share", metavar="DEST",
                     help="write a copy of the run's folder to DEST (a new folder) with the input files' paths made "
                          "relative, for sending results to others")
    rep.add_argument("--metric", help="for a sweep's results: the metric to tabulate and plot (default: the "
                                      "collective, iteration or latency time the points measured)")
    common(rep, "quiet", "json")
    rep.set_defaults(handler=cmd_report)

    sweep = commands.add_parser("sweep", help="run a study: a grid of scenarios, in parallel, resumable")
    sweep.add_argument("study", help="study TOML (base scenario, [grid] and [zip] lists; see README)")
    sweep.add_argument("--jobs", type=int, help="worker processes (default: the CPU count)")
    sweep.add_argument("--scheduler", help="run on a Dask cluster, e.g. tcp://127.0.0.1:8786 (needs netsim[dask])")
    common(sweep, "quiet", "json")
    sweep.set_defaults(handler=cmd_sweep)

    work = commands.add_parser("workload", help="workload tools")
    work_commands = work.add_subparsers(dest="workload_command", required=True, metavar="TOOL")
    gen = work_commands.add_parser("gen", help="write a workload (legacy txt + TOML) from GEMMs or transformer dims")
    gen.add_argument("--gemm", help="CSV with columns M,N,K[,name]; one linear layer per row")
    gen.add_argument("--parallel", help="for --gemm: DATA or MODEL (default DATA)")
    gen.add_argument("--npus", type=int, help=f"for --gemm MODEL: NPUs the N dimension is split over "
                                              f"(default {GEMM_MODEL_NPUS})")
    for flag, default, text in TRANSFORMER_OPTIONS:  # (defaults filled in by cmd_workload_gen)
        gen.add_argument(flag, type=int, help=f"{text} (default {default})")
    gen.add_argument("--peak-tflops", type=float, default=312.0, help="roofline peak (default 312)")
    gen.add_argument("--memory-bandwidth", default="2039GB/s", help="roofline memory bandwidth (default 2039GB/s)")
    gen.add_argument("--bytes-per-element", type=int, default=2, help="default 2")
    common(gen, "quiet", "out")
    gen.set_defaults(handler=cmd_workload_gen)
    chakra = work_commands.add_parser("to-chakra", help="convert a legacy or TOML workload into Chakra traces "
                                                        "(one NAME.<rank>.et per NPU of --network)")
    chakra.add_argument("workload", help="bundled workload name or workload file")
    chakra.add_argument("--network", default=DEFAULT_NETWORK,
                        help=f"the network the traces are for: its NPUs and dimensions (default {DEFAULT_NETWORK})")
    chakra.add_argument("--passes", type=int, default=1, help="training iterations in the traces (default 1)")
    common(chakra, "set", "quiet", "json", "out")
    chakra.set_defaults(handler=cmd_workload_to_chakra)
    return parser


def print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line on stderr (netsim's own without the source location they were raised at)."""
    text = str(message) if issubclass(category, NetsimWarning) else f"{category.__name__}: {message}"
    print(f"netsim: warning: {text}", file=sys.stderr)


class LazyConsole:
    """The console a command prints on: rich's Console with these options, made (and rich imported)
    when first used, so that a --quiet or --json run starts without rich."""

    def __init__(self, **options):
        self.options = options
        self.console = None

    def __getattr__(self, name: str):
        if self.console is None:
            from rich.console import Console

            self.console = Console(**self.options)
        return getattr(self.console, name)


def main(argv: list[str] | None = None) -> int:
    warnings.showwarning = print_warning
    try:
        args = build_parser().parse_args(argv)
        console = LazyConsole(stderr=args.json, quiet=args.quiet)
        return args.handler(args, console) or 0
    except NetsimError as exc:
        print(f"netsim: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:  # netsim.errors.Interrupted says which signal
        return interrupted_status(exc)
    except BrokenPipeError:  # stdout's reader went away (`netsim ... --json | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
