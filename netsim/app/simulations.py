"""netsim's simulations as Python functions, for notebooks and scripts: `netsim.run`,
`netsim.collective`, `netsim.synth` and `netsim.load`.

Each takes the command's options as keyword arguments (named as on the command line, `-` written
`_`), and `set`, a dict of config keys as `--set` takes them; it runs exactly what the command line
runs (the same scenario, the same checks, the same one-line errors, as netsim.errors.ConfigError)
and returns a `RunResult`: `.summary` is summary.json's content (a dict) and `.tables` its CSV
tables as pandas DataFrames (`links`, `end_to_end`, `detailed`, `link_timeseries`, ...). With
`out`, the output folder is written too. Ctrl-C (a notebook's interrupt) stops the simulation and
returns what was simulated, marked `partial`.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT = None  # an option left out: the command line's default


def run(*, network: str | Path | None = DEFAULT, system: str | Path | None = DEFAULT,
        workload: str | Path | None = DEFAULT, backend: str | None = None, passes: int = 1,
        comm_groups: str | Path | None = None, memory: str | Path | None = None, set: dict | None = None,
        seed: int = 0, out: str | Path | None = None, progress: bool = False):
    """Training iterations of a workload, or a run of Chakra traces (`workload` a folder or prefix of
    `.et` files, with their `comm_groups` and remote `memory` files) (`netsim run`); see the module
    docstring."""
    return simulate("run", {"network": network, "system": system, "workload": workload, "backend": backend,
                            "passes": passes, "comm-groups": comm_groups, "memory": memory}, set, seed, out, progress)


def collective(kind: str, size: str | int | None = None, *, network: str | Path | None = DEFAULT,
               system: str | Path | None = DEFAULT, algorithm: str | None = None, backend: str | None = None,
               verify: bool = False, set: dict | None = None, seed: int = 0, out: str | Path | None = None,
               progress: bool = False):
    """One collective on every NPU (`netsim collective KIND --size SIZE`); `size` may be a range
    'FROM:TO[:FACTOR]' (the result's `sizes` table); see the module docstring."""
    return simulate("collective", {"kind": kind, "size": size, "network": network, "system": system,
                                   "algorithm": algorithm, "backend": backend, "verify": verify},
                    set, seed, out, progress)


def synth(pattern: str, rate: float | None = None, *, network: str | Path | None = DEFAULT, packet_flits: int = 4,
          cycles: int = 10000, warmup: int | None = None, sweep: bool = False, set: dict | None = None,
          seed: int = 0, out: str | Path | None = None, progress: bool = False):
    """Synthetic traffic on the packet backend (`netsim synth`): one offered load (`rate`, in
    flits/node/cycle) or, with `sweep=True`, loads up to saturation; see the module docstring."""
    return simulate("synth", {"pattern": pattern, "rate": rate, "network": network, "packet-flits": packet_flits,
                              "cycles": cycles, "warmup": warmup, "sweep": sweep}, set, seed, out, progress)


def load(folder: str | Path):
    """A run's output folder read back (as `netsim report` reads it), as a RunResult."""
    from netsim.app.outputs import load_output
    from netsim.app.runner import RunResult

    summary, tables = load_output(Path(folder))
    return RunResult(summary.get("name", Path(folder).name), summary, tables)


def simulate(command: str, options: dict, overrides: dict | None, seed: int, out, progress: bool):
    """Run `command`'s scenario on `options` (None: the default) and `overrides` (--set KEY=VALUE)."""
    from netsim.app.parser import build_parser, command_line, option, set_option
    from netsim.app.scenarios import run_scenario
    from netsim.config import non_negative_int
    from netsim.csv_text import as_frame
    from netsim.app.outputs import prepare, write_outputs
    from netsim.app.progress import RunMonitor, make_view, watching

    params = {"command": command, **{key: value for key, value in options.items() if value is not None}}
    parser = build_parser()
    argv = command_line(params, parser)
    for key, value in (overrides or {}).items():
        argv += set_option(key, value)
    args = parser.parse_args(argv + ["--seed", str(seed)])
    option("--seed", non_negative_int, args.seed)
    if out is not None:
        prepare(Path(out))
    monitor = RunMonitor(f"netsim {command}", make_view(quiet=not progress))
    with watching(monitor):  # through the writing: a stop once the run has ended waits for its outputs
        result = run_scenario(args, monitor)
        if out is not None:
            write_outputs(result.summary, result.tables, Path(out))
    result.tables = {name: as_frame(table) for name, table in result.tables.items()}  # (synth's are plain columns)
    return result
