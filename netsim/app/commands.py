"""The `netsim` commands, each a function of the parsed arguments and the console, found by name
(`COMMANDS`): run, collective and synth simulate a scenario and write its folder; list, topo,
report, sweep and the workload tools."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from netsim.app.parser import TRANSFORMER_OPTIONS, GEMM_MODEL_NPUS, option
from netsim.app.printing import PRINTERS, print_links, print_ports, print_study, print_warnings
from netsim.app.progress import RunMonitor, interruptible, make_view, showing
from netsim.app.scenarios import run_scenario, split_overrides
from netsim.config import non_negative_int, parse_override, positive_float, positive_int
from netsim.errors import ConfigError
from netsim.network_config import NetworkFile, load_network
from netsim.network_plan import plan_network
from netsim.units import parse_bandwidth

if TYPE_CHECKING:
    from rich.console import Console

MAX_JOBS = 256  # --jobs at most this, or 4 per CPU if more


def output_dir(args, name: str) -> Path:
    """--out, else ./netsim-out/NAME (the run's name made one safe path component)."""
    from netsim.files import folder_name

    return Path(args.out) if args.out else Path.cwd() / "netsim-out" / folder_name(name)


def finish(args, console: Console, result, print_table, monitor: RunMonitor) -> int:
    """Write the run's folder, then print the summary (table, or JSON with --json).

    Returns the exit status: 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM) when a stop
    signal came (its partial results, or the whole result of a run that had ended, are written)."""
    from netsim.app import report
    from netsim.app.outputs import SUMMARY, write_outputs

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


def cmd_simulate(args, console: Console) -> int:
    """run, collective and synth: the scenario under a progress monitor, then the output folder."""
    from netsim.app.outputs import prepare

    option("--seed", non_negative_int, args.seed)
    prepare(Path(args.out) if args.out else Path.cwd() / "netsim-out")
    monitor = RunMonitor(f"netsim {args.command}", make_view(args.quiet))
    with interruptible(monitor):  # through the writing: a stop once the run has ended waits for its outputs
        with showing(monitor.view):
            result = run_scenario(args, monitor)
        return finish(args, console, result, PRINTERS[args.command], monitor)


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
    """A topology's summary, with the settings in force of a backend that shows some (the packet
    backend's: its config's, or --backend garnet; netsim.garnet.plan)."""
    from rich.table import Table

    network_overrides, _ = split_overrides(args.set)
    config = load_network(args.network, network_overrides, args.backend)
    config.build_topology()  # (refused, if its graph alone cannot fit, before the backend is planned)
    plan = plan_network(config, f"the topology of {config.name}")
    summary = plan.topology.summary()
    backend = plan.backend
    if backend.settings():
        summary[backend.settings_key] = backend.settings()
    if args.json:
        from netsim.app import report

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
    for key, value in backend.settings().items():
        shown = "-".join(map(str, value)) if isinstance(value, list) else f"{value:g}" if isinstance(value, float) \
            else str(value)
        table.add_row(f"{backend.label}: {key}", shown)
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
    with --keys, every config key with its unit, default and meaning (netsim.app.config_keys)."""
    from rich.table import Table

    if args.keys:
        from rich.markup import escape

        from netsim.app.config_keys import COLUMNS, config_keys

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


def report_study(args, console: Console, path: Path) -> None:
    """`netsim report` of a sweep's results: a flat CSV beside them, a table, and with --plot the
    headline metric against the varied parameters."""
    from netsim.app.outputs import write_table
    from netsim.app.sweep import headline_metric, results_frame, study_results, varied_keys

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
        from netsim.app.plots import write_study_plot

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
    from netsim.app.outputs import load_output, share

    if args.share is not None:
        shared = share(out_dir, Path(args.share), Path.cwd())
        if not args.quiet:
            console.print(f"wrote {shared}: a copy of {out_dir} with the input files' paths made relative")
        return

    summary, tables = load_output(out_dir)
    if args.plot:
        from netsim.app.plots import write_plots

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


def cmd_sweep(args, console: Console) -> int:
    """Run a study's points in parallel (or on a Dask cluster), appending each result as it finishes;
    then print the results table."""
    from netsim.app.study import load_study
    from netsim.app.sweep import headline_metric, results_frame, run_study, varied_keys

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


# by command name (`workload TOOL`: by both names)
COMMANDS = {"run": cmd_simulate, "collective": cmd_simulate, "synth": cmd_simulate, "list": cmd_list, "topo": cmd_topo,
            "report": cmd_report, "sweep": cmd_sweep, "workload gen": cmd_workload_gen,
            "workload to-chakra": cmd_workload_to_chakra}


def command_name(args) -> str:
    """The parsed command's name in COMMANDS."""
    tool = getattr(args, "workload_command", None)
    return f"{args.command} {tool}" if tool else args.command
