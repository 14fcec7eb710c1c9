"""The scenarios: what `netsim run`, `collective` and `synth` simulate, from their parsed arguments,
under a progress monitor, returning a RunResult. `netsim sweep` and the Python API run the same
scenarios, so a point or a call behaves exactly like the command line it stands for."""

from __future__ import annotations

import functools

from netsim.app.parser import option
from netsim.app.progress import StopRequested, tick
from netsim.config import (did_you_mean, non_negative_int, overrides_label, parse_override, positive_int, settings_of,
                           toml_key)
from netsim.errors import ConfigError
from netsim.network_config import NetworkFile, load_network
from netsim.network_plan import NetworkPlan, plan_network
from netsim.units import format_size, parse_size

SYNTH_CHECK_CYCLES = 100  # synth looks for Ctrl-C (and refreshes progress) at least this often


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


def settings_header(plan: NetworkPlan) -> str:
    """For the live view's header: the backend's settings in force on a line of their own (the packet
    backend's: netsim.garnet.plan); nothing for a backend that shows none."""
    line = plan.backend.settings_line()
    return "\n" + line if line else ""


def run_scenario(args, monitor):
    """Run `args`' scenario and name its result by what ran: the network's name carries its own
    --set overrides (netsim.network_config.load_network); this adds the rest that changes the
    results (--backend, --algorithm, system and workload keys, a seed other than 0), so runs
    with different settings get different names and default folders."""
    result = SCENARIOS[args.command](args, monitor)
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
    from netsim.app.runner import plan_for, run_training, workload_collectives
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
    plan = plan_for(network, system, workload_collectives(workload), f"this run of {workload.name}")
    monitor.title = f"netsim run: {workload.name} on {network.name} ({network.backend})" + settings_header(plan)
    return run_training(plan, system, workload, passes=passes, seed=args.seed, monitor=monitor)


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
    from netsim.app.runner import plan_for, run_trace
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
    plan = plan_for(network, system, [], f"this run of {args.workload}")
    monitor.title = (f"netsim run: Chakra trace {args.workload} on {network.name} ({network.backend})"
                     + settings_header(plan))
    return run_trace(plan, system, args.workload, comm_groups=groups, memory=memory, in_flight=in_flight,
                     seed=args.seed, monitor=monitor)


def scenario_collective(args, monitor):
    """One collective, or one per size of a --size range (the sizes table, nccl-tests style)."""
    from netsim.app.runner import RunResult, plan_for, run_collective
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
    plan = plan_for(network, system, [(args.kind, sizes[-1])], f"this {args.kind}")
    header = settings_header(plan)
    for nbytes in sizes:
        monitor.restart(f"netsim collective: {args.kind} of {format_size(nbytes)} on {network.name} "
                        f"({network.backend})" + (f", size {len(results) + 1} of {len(sizes)}" if len(sizes) > 1
                                                  else "") + header, None)
        results.append(run_collective(plan, system, args.kind, nbytes, seed=args.seed, verify=args.verify,
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
    from netsim.app import traffic
    from netsim.garnet.stats import latency_table

    network_overrides, _ = split_overrides(args.set)
    network = load_network(args.network, network_overrides, traffic.PACKET_BACKEND)
    plan = plan_network(network, f"a run on {network.name}")
    header = settings_header(plan)
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
            for point in traffic.sweep_points(plan, args.pattern, args.packet_flits, args.cycles, args.seed,
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
        run = traffic.SynthRun(plan, args.pattern, args.rate, args.packet_flits, args.cycles, args.seed,
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
    from netsim.app.runner import RunResult, network_summary

    name = f"synth-{args.pattern}-{network.name}" + ("-sweep" if args.sweep else f"-{args.rate:g}")
    # what every command's summary has (simulated time, link loading, configs), then synth's own figures
    common = {} if measured is None else network_summary(measured.network, plan, None, 0.0, args.seed, partial,
                                                         link_tables, monitor.notes)
    summary = {"name": name, "pattern": args.pattern, "packet_flits": args.packet_flits, **common, **summary,
               "backend": network.backend, "partial": partial, "seed": args.seed, "cycle_ns": 1.0 / network.garnet.clock_ghz,
               "network": {"name": network.name, "path": network.path,
                           "topology": plan.topology.summary(), "config": network.table}}
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


SCENARIOS = {"run": scenario_run, "collective": scenario_collective, "synth": scenario_synth}
