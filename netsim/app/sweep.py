"""`netsim sweep STUDY.toml`: a grid of scenarios, run in parallel, resumable, one JSON line per point.

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

import argparse
import hashlib
import itertools
import json
import math
import os
import re
import signal
import threading
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from netsim.config import as_table, non_negative_int, overrides_label, read_text, read_toml
from netsim.errors import ConfigError, NetsimError
from netsim.files import append_whole, cannot_write, write_whole
from netsim.app.progress import NullView, ProgressFile, RunMonitor, Snapshot, watching
from netsim.app.report import finite
from netsim.units import UnitError

COMMANDS = ("run", "collective", "synth")
LEFT_OUT = ("wall_time_s",)  # not reproducible: kept out of the results file
RESULTS_FILE = "the results file"  # how errors name it
RECORD = {"point": int, "key": str, "params": dict, "seed": int, "status": str}  # every record's keys
PROGRESS = ".progress"  # a running point's progress (a fraction), in its folder


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


def run_point(point: Point, folder: Path, results: Path) -> dict:
    """Run one point (in a worker) and write its output folder `folder` (its record names it
    relative to the `results` file); never raises: a failure becomes the record's error."""
    from netsim.app.parser import build_parser
    from netsim.app.scenarios import run_scenario
    from netsim.app.outputs import write_outputs

    record = {"point": point.index, "key": point.key, "params": point.varied, "seed": point.seed}
    progress = folder / PROGRESS
    try:
        parser = build_parser()
        args = parser.parse_args(point_argv(point, parser))  # a bad option: ConfigError
        folder.mkdir(parents=True, exist_ok=True)
        result = run_scenario(args, RunMonitor(view=ProgressFile(progress)))
        write_outputs(result.summary, result.tables, folder)
    except NetsimError as exc:
        return {**record, "status": "error", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - a failing point must not stop the sweep
        return {**record, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        progress.unlink(missing_ok=True)
    metrics = finite({key: value for key, value in result.summary.items()  # strict JSON, as summary.json
                      if isinstance(value, (bool, int, float, str)) and key not in LEFT_OUT})
    return {**record, "status": "ok", "folder": os.path.relpath(folder, results.parent), "result": metrics}


def running_progress(folder: Path) -> float:
    """A running point's progress (0 to 1) as its worker last wrote it; 0 before it has."""
    try:
        return min(1.0, max(0.0, float(folder.joinpath(PROGRESS).read_text())))
    except (OSError, ValueError):
        return 0.0


def as_record(line: str) -> dict | None:
    """A results file's line as a point's record (as run_point makes it), or None if it is not one."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(record, dict) or record.get("status") not in ("ok", "error") \
            or not isinstance(record.get("result", {}), dict):
        return None
    typed = all(isinstance(record.get(key), kind) and not isinstance(record.get(key), bool)
                for key, kind in RECORD.items())
    return record if typed else None


def read_results(path: Path) -> dict[str, dict]:
    """Finished records by point key (the last record of a key wins). A torn last line (no newline:
    the sweep was killed while writing it) is ignored; any other line that is not a record, or a
    path that is no readable file, is a one-line error."""
    records = {}
    if not path.exists():
        return records
    lines = read_text(path).split("\n")  # the last item is "" or a torn line
    for number, line in enumerate(lines, start=1):
        record = as_record(line) if line.strip() else None
        if record is not None:
            records[record["key"]] = record
        elif line.strip() and number < len(lines):
            shown = line if len(line) <= 60 else line[:57] + "..."
            raise ConfigError(f"{path}:{number}: expected a sweep point's record, a JSON object with keys "
                              f"{', '.join(RECORD)} (one per line, as netsim sweep writes them), got {shown!r}")
    return records


def open_results(path: Path):
    """The results file opened for appending (unbuffered, for netsim.files.append_whole), after a
    torn last line is cut off (a complete record that only lacks its newline gets one), so that every
    record starts a line of its own."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = path.read_bytes() if path.is_file() else b""
        tail = data[data.rfind(b"\n") + 1:]
        complete = as_record(tail.decode("utf-8", "replace")) is not None
        if tail and not complete:
            os.truncate(path, len(data) - len(tail))
        out = open(path, "ab", buffering=0)
        if tail and complete:
            append_whole(out, "\n", RESULTS_FILE)
        return out
    except (FileExistsError, NotADirectoryError) as exc:  # a file where a folder of the path should be
        raise ConfigError(f"{path}: cannot write {RESULTS_FILE} ({exc.filename} is not a folder)") from None
    except OSError as exc:
        raise cannot_write(exc.filename or path, exc, RESULTS_FILE) from None


def _worker_start(parent: int) -> None:
    """In each worker process: Ctrl-C and SIGTERM are the parent's to handle (SIGTERM, sent by the
    parent to stop a worker, ends it at once), and a worker whose parent has died (killed, even by
    SIGKILL) exits within half a second instead of waiting for work forever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def watch_parent() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch_parent, name="netsim-parent-watch", daemon=True).start()


class SweepState:
    """Monitor of a sweep: stop flag (netsim.app.progress.interruptible: Ctrl-C, SIGTERM) and the view."""

    def __init__(self, view, total: int, skipped: int):
        self.view = view
        self.total = total
        self.done = skipped
        self.failed = 0
        self.interrupted = False
        self.stop_signal = None
        self.simulating = True  # a stop is taken between points from the start (netsim.app.progress.interruptible)
        self.started = time.perf_counter()
        self.next_refresh = 0.0
        self.skipped = skipped
        self.running: list[tuple[str, Path]] = []  # (label, folder) of the points handed out, not finished

    def started_work(self) -> None:
        """The first progress line, once the results file is open and the workers (or cluster) are
        reached: an error before then is the only line printed."""
        self.view.update(Snapshot("netsim sweep", self.done / max(1, self.total),
                                  f"{self.done:,}/{self.total:,} points (already done: {self.done:,})", 0.0))

    def record(self, record: dict) -> None:
        self.done += 1
        self.failed += record["status"] != "ok"
        self.refresh(force=self.done == self.total)

    def refresh(self, force: bool = False) -> None:
        """Show the sweep's progress (at most every view.period): the finished points plus each running
        point's own progress; the ETA is based on this run's share of the work (points skipped as
        already done are left out of it)."""
        now = time.perf_counter()
        if now < self.next_refresh and not force:
            return
        self.next_refresh = now + self.view.period
        shares = [(label, running_progress(folder)) for label, folder in self.running]
        moving = sum(share for _, share in shares)
        text = f"{self.done:,}/{self.total:,} points, {self.failed} failed"
        started = [f"{label} {share:.0%}" for label, share in shares if share > 0]
        if started:
            text += "; running " + ", ".join(started[:4]) + (" ..." if len(started) > 4 else "")
        todo = max(1, self.total - self.skipped)
        self.view.update(Snapshot("netsim sweep", (self.done + moving) / max(1, self.total), text, now - self.started,
                                  eta_fraction=(self.done - self.skipped + moving) / todo))


def _local(todo, jobs: int, state: SweepState, emit, study: Study) -> None:
    """Run the points of the iterator `todo` in `jobs` worker processes, at most 2 * jobs handed out
    at a time (a million-point study is not submitted up front); on a stop, end the workers."""
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_start, initargs=(os.getpid(),))
    state.started_work()
    pending: dict = {}  # future: (label, folder) of its point
    try:
        while not state.interrupted:
            while len(pending) < 2 * jobs and (point := next(todo, None)) is not None:
                folder = study.folder(point)
                pending[pool.submit(run_point, point, folder, study.results)] = (f"p{point.index}", folder)
            if not pending:
                break
            state.running = list(pending.values())
            finished, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in finished:
                del pending[future]
                state.running = list(pending.values())
                emit(future.result())
            state.refresh()
    except BrokenProcessPool:
        raise NetsimError("a sweep worker process died (out of memory, or killed); finished points are "
                          "in the results file, a rerun resumes") from None
    finally:
        for future in pending:
            future.cancel()
        if state.interrupted or pending:
            # the executor's own thread may trip over the workers ended here (Python 3.10 printed
            # "Exception in thread" now and then): a stop is what it sees, not an error to show
            previous_hook = threading.excepthook
            threading.excepthook = lambda args: None
            try:
                for process in list(getattr(pool, "_processes", {}).values()):
                    process.terminate()  # running points are lost; finished ones are in the file
                pool.shutdown(wait=True, cancel_futures=True)
            finally:
                threading.excepthook = previous_hook
        else:
            pool.shutdown(wait=True, cancel_futures=True)


def check_scheduler(address: str) -> str:
    """A Dask scheduler address netsim can use: tcp://HOST:PORT. netsim trusts the cluster it is
    given (points and results travel pickled), and TLS needs certificates netsim does not take."""
    if address.startswith("tls://"):
        raise ConfigError(f"--scheduler {address}: TLS is not supported; netsim trusts the Dask cluster it is "
                          f"given (points and results travel pickled), so use tcp:// on a network you trust "
                          f"(e.g. through an SSH tunnel)")
    if not re.fullmatch(r"tcp://(\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):[0-9]{1,5}", address):
        raise ConfigError(f"--scheduler {address!r}: expected a Dask scheduler address tcp://HOST:PORT, "
                          f"e.g. tcp://127.0.0.1:8786")
    return address


def _dask(todo, scheduler: str, state: SweepState, emit, study: Study) -> None:
    """Run the points of `todo` on a Dask cluster, a bounded number submitted at a time."""
    try:
        from distributed import Client, as_completed
    except ModuleNotFoundError:
        raise ConfigError("--scheduler needs Dask: pip install 'netsim[dask]'") from None
    try:
        client = Client(scheduler, timeout="10s")
    except (OSError, ValueError, TypeError) as exc:
        raise ConfigError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
    with client:
        state.started_work()
        in_flight = 2 * max(1, sum(client.nthreads().values()))
        first = list(itertools.islice(todo, in_flight))
        futures = as_completed(client.map(run_point, first, [study.folder(point) for point in first],
                                          [study.results] * len(first), pure=False))
        try:
            for future in futures:
                emit(future.result())
                if state.interrupted:
                    break
                point = next(todo, None)
                if point is not None:
                    futures.add(client.submit(run_point, point, study.folder(point), study.results, pure=False))
        finally:
            futures.clear()
            client.cancel(list(client.futures.values()) if hasattr(client, "futures") else [])


def run_study(study: Study, jobs: int | None = None, scheduler: str | None = None, view=None) -> dict:
    """Run the study's unfinished points; returns counts (points, skipped, ok, failed, interrupted:
    stopped before every point ran, stop_signal, results). Points are made and checked against the results file as they are handed
    out, so a large study shows progress at once. A results file holding records of other points
    (another study's, or this one's before it changed) is never written over: a one-line error."""
    if scheduler:
        check_scheduler(scheduler)
    records = own_records(study, read_results(study.results))
    done = {key for key, record in records.items() if record["status"] == "ok"}
    total = len(study.points)
    state = SweepState(view or NullView(), total, len(done))
    todo = (point for point in study.points if point.key not in done)
    with open_results(study.results) as out, watching(state):
        def emit(record: dict) -> None:
            append_whole(out, json.dumps(record, sort_keys=True) + "\n", RESULTS_FILE)
            state.record(record)

        if scheduler:
            _dask(todo, scheduler, state, emit, study)
        else:
            _local(todo, jobs or os.cpu_count() or 1, state, emit, study)
        records = own_records(study, read_results(study.results))
        finished = len(records) == total  # every point ran (a stop after the last one lost nothing)
        if finished:
            ordered = sorted(records.values(), key=lambda record: record["point"])
            write_whole(study.results, "".join(json.dumps(r, sort_keys=True) + "\n" for r in ordered), RESULTS_FILE)
    statuses = [record["status"] for record in records.values()]
    return {"points": total, "skipped": len(done), "failed": statuses.count("error"), "ok": statuses.count("ok"),
            "interrupted": state.interrupted and not finished, "stop_signal": state.stop_signal,
            "results": str(study.results)}


def own_records(study: Study, records: dict[str, dict]) -> dict[str, dict]:
    """`records` (a results file's, by key), checked to be this study's: each names a point of the
    study by index and key. Cost: one point per record, not the whole study."""
    total = len(study.points)
    strangers = [record for key, record in records.items()
                 if not 0 <= record["point"] < total or study.points[record["point"]].key != key]
    if strangers:
        raise ConfigError(f"{study.results}: holds {len(strangers)} record(s) of points not in this study (e.g. "
                          f"point {strangers[0]['point']} with other parameters: another study's results, or "
                          f"this study before it changed); netsim will not write over it: move it away or give "
                          f"the study another 'results' name")
    return records


def sweep(name: str, base: dict, grid: dict, out_dir: Path, zipped: dict | None = None, seed: int = 0,
          jobs: int | None = None, view=None):
    """For scripts: run a study given as dicts (results in OUT_DIR/NAME.results.jsonl, each point's
    folder in OUT_DIR/NAME.points, resumable like any study) and return its results_frame; raises
    ConfigError if a point failed."""
    results = out_dir / f"{name}.results.jsonl"
    study = Study(results, Points(base, grid, zipped or {}, seed), out_dir / f"{name}.points")
    counts = run_study(study, jobs, view=view)
    if counts["interrupted"]:
        raise KeyboardInterrupt
    frame = results_frame(results)
    failed = frame[frame["status"] != "ok"]
    if len(failed):
        raise ConfigError(f"{name}: {len(failed)} points failed, e.g. {failed['error'].iloc[0]}")
    return frame


def results_frame(path: Path):
    """A results file as a DataFrame: point, seed, status, error, varied parameters, metrics."""
    import pandas as pd

    rows = [{"point": r["point"], "seed": r["seed"], "status": r["status"], "error": r.get("error", ""),
             "folder": r.get("folder", ""), **r["params"], **r.get("result", {})} for r in read_results(path).values()]
    return pd.DataFrame(rows).sort_values("point").reset_index(drop=True) if rows else pd.DataFrame()


# the metric a study report shows first, by what the points measured (the first found)
HEADLINE_METRICS = ("collective_time_ns", "end_to_end_time_ns", "saturation_load", "avg_packet_latency_cycles")


def varied_keys(path: Path) -> list[str]:
    """The parameters a results file's points vary, in the order the study lists them."""
    keys: dict[str, None] = {}
    for record in sorted(read_results(path).values(), key=lambda r: r["point"]):
        keys.update(dict.fromkeys(record["params"]))
    return list(keys)


def headline_metric(frame, metric: str | None = None) -> str:
    """`metric` (checked to be a column of the results) or the first of HEADLINE_METRICS there."""
    if metric is not None:
        if metric not in frame.columns:
            numeric = [c for c in frame.columns if c not in ("point", "seed") and frame[c].dtype.kind in "if"]
            raise ConfigError(f"--metric {metric}: not in these results (numbers there: {', '.join(numeric)})")
        return metric
    found = [name for name in HEADLINE_METRICS if name in frame.columns]
    if not found:
        raise ConfigError("no finished point in these results to report on")
    return found[0]


def study_results(path: Path) -> Path:
    """The results file of `path`: the file itself, or the one *.results.jsonl in a study's folder."""
    if path.is_dir():
        found = sorted(path.glob("*.results.jsonl"))
        if len(found) != 1:
            what = "no" if not found else f"{len(found)}"
            raise ConfigError(f"{path}: {what} *.results.jsonl files here; name the one to report on")
        return found[0]
    return path


def study_arguments(description: str, default_out: str, quick_help: str) -> argparse.ArgumentParser:
    """The command line every study script shares: --quick, --out (results folder) and --jobs."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--out", default=default_out, help=f"results folder (default {default_out})")
    parser.add_argument("--jobs", type=int, help="worker processes (default: the CPU count)")
    return parser


def results_folder(args: argparse.Namespace) -> Path:
    """A study's results folder (created): OUT/quick or OUT/full, so the two never mix."""
    out = Path(args.out) / ("quick" if args.quick else "full")
    out.mkdir(parents=True, exist_ok=True)
    return out
