"""A study file (`netsim sweep STUDY.toml`): a grid of scenarios, read, checked and laid out as points.

A study file:

    seed = 1                         # study seed; each point's seed derives from it
    results = "results.jsonl"        # default: STUDY.results.jsonl beside the study file
    out = "points"                   # each point's output folder goes in here (default: STUDY.points)
    [base]                           # one scenario, as on the command line
    command = "collective"           # run | collective | synth
    kind = "all-reduce"              # collective's KIND (positional)
    size = "1MiB"
    network = "torus-4x4"
    backend = "garnet"
    "garnet.vcs" = 2                 # any other key is a --set KEY=VALUE override
    [grid]                           # cartesian product of these lists
    "garnet.buffer_flits" = [2, 4, 8]
    [zip]                            # lists of one length, varied together (times the grid)
    size = ["1KiB", "1MiB"]
    network = ["torus-4x4", "switch-16"]

A point is exactly the command line it stands for (the CLI's scenario functions run it), so every
option and every network, system or workload key can be varied, each once whatever its spelling
(`setting_name`; a [base] value of a varied setting gives way to the varied one). Points run in worker processes
(`jobs`), or on a Dask cluster (`scheduler`). Each finished point is appended to the results file
at once, so a crash or Ctrl-C loses nothing; a rerun skips the points already there (resume), and
retries failed ones. A failing point is recorded with its one-line error and the sweep goes on.
When all points are done the file is rewritten in point order: the same study gives the same file
however it was interrupted and whatever the number of workers (each point's seed comes from the
study seed through numpy's SeedSequence; wall times are left out for that reason).
Each point writes the output folder its command would (summary.json, links.csv, vcs.csv, ...;
`netsim report` reads it) into the study's `out` folder, named by its number and varied settings
(`p03+buffer_flits=8`); its record names it (`folder`, relative to the results file). While points
run, each reports its own progress (bytes delivered) in `.progress` in its folder, so the sweep's
view and ETA move with the running points, not only when one finishes.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from netsim.config import as_table, non_negative_int, overrides_label, read_toml
from netsim.errors import ConfigError
from netsim.units import UnitError

COMMANDS = ("run", "collective", "synth")


@dataclass(frozen=True)
class Point:
    """One scenario of a study: its index, varied parameters, full parameters and seed."""

    index: int
    varied: dict
    params: dict
    seed: int
    folder: str = "."  # the study file's folder: a relative path in `params` is relative to it (not in `key`)

    @property
    def key(self) -> str:
        """Stable id: the same parameters and seed are the same point in any later run."""
        text = json.dumps({"params": self.params, "seed": self.seed}, sort_keys=True)
        return hashlib.sha1(text.encode()).hexdigest()[:16]

    def folder_name(self, points: int) -> str:
        """The point's output folder: its number (as wide as the study's largest) and varied settings,
        e.g. `p03+buffer_flits=8+kind=all-to-all`."""
        from netsim.files import folder_name

        label = overrides_label([(key.split("."), value) for key, value in self.varied.items()])
        return folder_name(f"p{self.index:0{len(str(max(0, points - 1)))}d}{label}")


@dataclass(frozen=True)
class Study:
    results: Path
    points: "Points"
    folders: Path  # each point's output folder is made in here

    def folder(self, point: Point) -> Path:
        return self.folders / point.folder_name(len(self.points))


class Points(Sequence):
    """A study's points, made when asked for (a study of a million points starts at once): the
    grid's cartesian product times the zipped lists, point i seeded from the study seed by numpy's
    SeedSequence (the i-th of its spawned children), whatever runs it."""

    def __init__(self, base: dict, grid: dict, zipped: dict, seed: int, folder: Path = Path(".")):
        self.folder = str(folder)
        varied = {setting_name(key) for key in (*grid, *zipped)}
        self.base = {key: value for key, value in base.items() if setting_name(key) not in varied}
        self.seed = seed
        self.grid_keys, self.grid_values = list(grid), list(grid.values())
        self.zipped = [dict(zip(zipped, values)) for values in zip(*zipped.values())] or [{}]
        self.combos = math.prod(len(values) for values in self.grid_values)

    def __len__(self) -> int:
        return self.combos * len(self.zipped)

    def __getitem__(self, index):
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        index %= len(self)
        combo, z = divmod(index, len(self.zipped))
        chosen = []
        for values in reversed(self.grid_values):  # the last key varies fastest, as itertools.product
            combo, i = divmod(combo, len(values))
            chosen.append(values[i])
        varied = {**dict(zip(self.grid_keys, reversed(chosen))), **self.zipped[z]}
        seed = int(np.random.SeedSequence(self.seed, spawn_key=(index,)).generate_state(1)[0])
        return Point(index, varied, {**self.base, **varied}, seed, self.folder)


def _value(table: dict, name: str, parse, default, source):
    """The study's `name` (`default` when absent), read by `parse`; a bad value is a one-line error."""
    try:
        return parse(table.get(name, default))
    except UnitError as exc:
        raise source.error(name, str(exc)) from None


def _lists(table, name: str, source) -> dict:
    for key, values in table.items():
        if not isinstance(values, list) or not values:
            raise source.error(f"{name}.{key}", "expected a non-empty list of values")
    return dict(table)


def setting_name(key: str) -> str:
    """The setting a study key stands for, whatever its spelling: without a `network.` or `system.`
    prefix, and an option's `_` as `-` (`network.topology.bandwidth` is `topology.bandwidth`,
    `network.backend` is `backend`, `packet_flits` is `packet-flits`)."""
    for prefix in ("network.", "system."):
        if key.startswith(prefix) and len(key) > len(prefix):
            key = key[len(prefix):]
            break
    return key if "." in key else key.replace("_", "-")


PATH_SETTINGS = ("network", "system", "workload", "comm-groups", "memory")  # values that name files (setting_name)


def bundled_configs(setting: str) -> tuple[str, tuple[str, ...]] | None:
    """The package and file suffixes of the bundled configs a path setting may name instead of a file."""
    from netsim.network_config import NETWORK_SUFFIXES
    from system.config import SYSTEM_SUFFIXES
    from workload import WORKLOAD_SUFFIXES

    return {"network": ("topologies", NETWORK_SUFFIXES), "system": ("system.configs", SYSTEM_SUFFIXES),
            "workload": ("workload.data", WORKLOAD_SUFFIXES)}.get(setting)


def resolved_path(key: str, value, folder: Path):
    """`value` of study key `key` as the command line takes it: a path relative to the study's
    `folder` (not to the current folder, which may hold another file of that name) made absolute,
    a bundled config's name kept; anything else is None (checked by check_paths)."""
    if setting_name(key) not in PATH_SETTINGS or not isinstance(value, str):
        return value
    from workload.chakra import is_trace_spec  # a Chakra trace is a prefix of files, not one file

    candidate = folder / Path(value).expanduser()
    try:
        if candidate.exists() or (setting_name(key) == "workload" and is_trace_spec(candidate)):
            return str(candidate.absolute())
    except OSError:  # a name too long for the file system: no such file
        pass
    bundled = bundled_configs(setting_name(key))
    if bundled is not None:
        from netsim.bundled import bundled_names

        name = value
        for suffix in bundled[1]:
            name = name.removesuffix(suffix)
        if name in bundled_names(*bundled):
            return value
    return None


def check_paths(base: dict, grid: dict, zipped: dict, folder: Path, source) -> None:
    """Every file a study names (network, system, workload, comm groups, memory) exists beside the
    study (or is a bundled config), checked before any point runs: a one-line error naming the key."""
    for table_name, table in (("base", base), ("grid", grid), ("zip", zipped)):
        for key, values in table.items():
            for value in values if table_name != "base" else [values]:
                if resolved_path(key, value, folder) is None:
                    raise source.error(f"{table_name}.{key}", f"{value!r} is no file or folder relative to the "
                                                              f"study's folder {folder}, nor a bundled config")


def check_keys(points: "Points", source) -> None:
    """Every key of the study is an option of its command or a config key of its network or system,
    checked on the first point (all points have the same keys) before any point runs: a misspelt
    key would otherwise fail every point."""
    from netsim.app.parser import build_parser
    from netsim.app.scenarios import split_overrides
    from netsim.network_config import load_network
    from system import load_system

    if not len(points):
        return
    parser, point = build_parser(), points[0]
    context = {key: value for key, value in point.params.items()
               if setting_name(key) in ("command", "kind", "network", "system", "backend")}
    for key, value in point.params.items():
        try:
            args = parser.parse_args(point_argv(Point(0, {}, {**context, key: value}, 0, point.folder), parser))
            network, system = split_overrides([item for item in args.set if not item.startswith("workload.")])
            if network and hasattr(args, "backend"):
                load_network(args.network, network, args.backend)
            if system and hasattr(args, "system"):
                load_system(args.system, system)
        except ConfigError as exc:
            if "unknown key" in str(exc) or "unrecognized arguments" in str(exc):
                table_name = "base" if key in points.base else ("grid" if key in points.grid_keys else "zip")
                raise source.error(f"{table_name}.{key}", f"not an option of netsim {point.params['command']} "
                                                          f"nor a config key ({exc})") from None


def _each_setting_once(base: dict, grid: dict, zipped: dict, source) -> None:
    """A setting is given once: a second spelling, or a value varied in both [grid] and [zip], would
    be silently overridden on the command line while the results still recorded it. (A varied
    setting may also have a value in [base]: the varied one is used.)"""
    seen: dict[str, str] = {}
    for table_name, table in (("base", base), ("grid", grid), ("zip", zipped)):
        for key in table:
            name = setting_name(key)
            earlier = seen.get(name)
            if earlier is not None and not (earlier.startswith("base.") and table_name != "base"):
                raise source.error(f"{table_name}.{key}", f"sets '{name}' again (also as '{earlier}'): keep one")
            seen[name] = f"{table_name}.{key}"


def load_study(path: Path) -> Study:
    """Read and expand a study file (see the module docstring)."""
    table, source = read_toml(path)
    unknown = set(table) - {"seed", "results", "out", "base", "grid", "zip"}
    if unknown:
        key = sorted(unknown)[0]
        raise source.error(key, "unknown key (expected seed, results, out, [base], [grid], [zip])")
    base = _value(table, "base", as_table, {}, source)
    if base.get("command") not in COMMANDS:
        raise source.error("base.command", f"expected one of {', '.join(COMMANDS)}")
    grid = _lists(_value(table, "grid", as_table, {}, source), "grid", source)
    zipped = _lists(_value(table, "zip", as_table, {}, source), "zip", source)
    for name, varied in (("grid", grid), ("zip", zipped)):
        if name in table and not varied:
            raise source.error(name, f"[{name}] is empty: list the values to vary in it, or leave it out")
    for name, settings in (("base", base), ("grid", grid), ("zip", zipped)):
        if "out" in settings:
            raise source.error(f"{name}.out", "each point writes its own folder: name the folder they go in with "
                                              "out = \"NAME\" at the study's top level")
    _each_setting_once(base, grid, zipped, source)
    lengths = {len(values) for values in zipped.values()}
    if len(lengths) > 1:
        raise source.error("zip", f"lists of different lengths {sorted(lengths)}: zipped lists vary together")
    if "command" in grid or "command" in zipped:
        raise source.error("grid", "vary one command per study; 'command' belongs in [base]")
    seed = _value(table, "seed", non_negative_int, 0, source)
    results_name = table.get("results", f"{path.stem}.results.jsonl")
    if not isinstance(results_name, str) or not results_name:
        raise source.error("results", f"expected a file name, got {results_name!r}")
    if Path(results_name).name != results_name or results_name in (".", ".."):
        raise source.error("results", f"expected a file name in the study's folder, got {results_name!r} "
                                      f"(results stay beside the study)")
    results = path.parent / results_name
    folders = table.get("out", f"{path.stem}.points")
    if not isinstance(folders, str) or not folders or Path(folders).name != folders or folders in (".", ".."):
        raise source.error("out", f"expected a folder name in the study's folder, got {folders!r}")
    check_paths(base, grid, zipped, path.parent, source)
    points = Points(base, grid, zipped, seed, path.parent)
    check_keys(points, source)
    return Study(results, points, path.parent / folders)


def point_argv(point: Point, parser=None) -> list[str]:
    """The command line a point stands for (`parser`: the netsim parser, built if not given)."""
    from netsim.app.parser import command_line

    params = {key: resolved_path(key, value, Path(point.folder)) or value for key, value in point.params.items()}
    return command_line(params, parser) + ["--seed", str(point.seed), "--quiet"]
