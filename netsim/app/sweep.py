"""`netsim sweep STUDY.toml`: a study's points (netsim.app.study) run in parallel, resumable, one
JSON line per point.

A point is exactly the command line it stands for (the CLI's scenario functions run it). Points run
in worker processes (`jobs`), or on a Dask cluster (`scheduler`). Each finished point is appended to
the results file at once, so a crash or Ctrl-C loses nothing; a rerun skips the points already there
(resume), and retries failed ones. A failing point is recorded with its one-line error and the sweep
goes on. When all points are done the file is rewritten in point order: the same study gives the same
file however it was interrupted and whatever the number of workers (wall times are left out for that
reason). Each point writes the output folder its command would into the study's `out` folder; while
points run, each reports its own progress (bytes delivered) in `.progress` in its folder, so the
sweep's view and ETA move with the running points, not only when one finishes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from netsim.app.progress import NullView, ProgressFile, RunMonitor, Snapshot, watching
from netsim.app.report import finite
from netsim.app.study import Point, Points, Study, point_argv
from netsim.config import read_text
from netsim.errors import ConfigError, NetsimError
from netsim.files import append_whole, cannot_write, write_whole

LEFT_OUT = ("wall_time_s",)  # not reproducible: kept out of the results file
RESULTS_FILE = "the results file"  # how errors name it
RECORD = {"point": int, "key": str, "params": dict, "seed": int, "status": str}  # every record's keys
PROGRESS = ".progress"  # a running point's progress (a fraction), in its folder


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
