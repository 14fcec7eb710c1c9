"""An output folder: written so that a reader never takes a damaged one for a whole one, read back
with checks.

Writing: the old summary.json goes first (a folder without one is not a finished run), then every
table is written whole (netsim.files: a temporary file renamed into place), and summary.json comes
last, listing the tables it belongs with (`files`: name -> bytes). A full disk or an unwritable place is a
one-line error, never a table cut mid-row beside a summary that says all is well.

Reading: only the tables summary.json lists are read (stale files of an earlier run in the same
folder are not), each a CSV file of the folder itself (a name with a path in it, absolute or with
`..`, is never read), each of the size listed, and the tables the report reads must have their
columns; anything else says the folder is damaged.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from netsim.config import read_text
from netsim.csv_text import csv_text
from netsim.errors import ConfigError
from netsim.files import cannot_write, write_whole
from netsim.api import LINK_COLUMNS
from netsim.app.report import to_json
from netsim.app.timeseries import TIMESERIES_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

    from netsim.csv_text import Table

SUMMARY = "summary.json"
INSTALLATION = Path(__file__).resolve().parents[2]  # the folder netsim/, system/ and topologies/ are in
# Columns `netsim report` and its plots read, per table (a table of another kind is read as it is).
REQUIRED_COLUMNS = {
    "links": tuple(LINK_COLUMNS),
    "link_timeseries": TIMESERIES_COLUMNS,
    "packet_latency": ("latency_cycles", "packets"),
    "sweep": ("offered_load", "accepted_load", "avg_packet_latency_cycles", "saturated"),
}
INPUT_PATHS = (("network", "path"), ("workload", "path"))  # summary.json's entries naming input files



def prepare(out_dir: Path) -> None:
    """Create `out_dir` now and check it can be written, so a run does not simulate for nothing."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe = out_dir / f".netsim-probe.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f"{out_dir}: cannot write the output folder here ({exc.strerror or exc})") from None


def write_outputs(summary: dict, tables: dict[str, Table], out_dir: Path) -> Path:
    """Write summary.json and every table (a DataFrame or plain columns: netsim.csv_text) as NAME.csv
    into `out_dir` (created if needed); see the module docstring. `summary` gets its `files` entry."""
    what = f"the output folder {out_dir}"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / SUMMARY).unlink(missing_ok=True)
    except OSError as exc:
        raise cannot_write(exc.filename or out_dir, exc, what) from None
    files = {}
    for name, table in tables.items():
        path = out_dir / f"{name}.csv"
        write_whole(path, csv_text(table), what)
        files[path.name] = path.stat().st_size
    summary["files"] = files
    write_whole(out_dir / SUMMARY, to_json(summary) + "\n", what)
    return out_dir


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """One CSV written whole or not at all (a one-line error when it cannot be written)."""
    write_whole(path, csv_text(frame))


def load_output(out_dir: Path) -> tuple[dict, dict[str, pd.DataFrame]]:
    """Read a run's output folder back: summary.json and its CSV tables (see the module docstring)."""
    summary_path = out_dir / SUMMARY
    if not summary_path.is_file():
        raise ConfigError(f"{out_dir}: not a netsim output folder (no {SUMMARY}; a run still writing it, "
                          f"or one whose writing failed, has none)")
    try:
        summary = json.loads(read_text(summary_path))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{summary_path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    if not isinstance(summary, dict):
        raise ConfigError(f"{summary_path}: expected a JSON object")
    check_summary(summary, summary_path)
    files = summary.get("files")
    if files is None:  # written before summaries listed their tables
        paths = sorted(out_dir.glob("*.csv"))
    elif isinstance(files, dict) and all(isinstance(size, int) for size in files.values()):
        paths = [listed_table(out_dir, name, size) for name, size in files.items()]
    else:
        raise ConfigError(f"{summary_path}: key 'files': expected file names and sizes, got {files!r:.60}")
    return summary, {path.stem: read_table(path) for path in paths}


def share(out_dir: Path, dest: Path, base: Path) -> Path:
    """A copy of the run folder `out_dir` at `dest` (a new folder), for sending results to others:
    its tables byte for byte, and summary.json with the input files' paths made relative
    (`shared_path`). The folder is checked as `netsim report` checks it first."""
    summary, tables = load_output(out_dir)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ConfigError(f"{dest}: already exists; --share writes a new folder")
    what = f"the shared copy {dest}"
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(exc.filename or dest, exc, what) from None
    for name in (f"{stem}.csv" for stem in tables):
        write_whole(dest / name, (out_dir / name).read_bytes(), what)
    for section, key in INPUT_PATHS:
        entry = summary.get(section)
        if isinstance(entry, dict) and isinstance(entry.get(key), str):
            entry[key] = shared_path(entry[key], base)
    write_whole(dest / SUMMARY, to_json(summary) + "\n", what)
    return dest


def shared_path(path: str, base: Path) -> str:
    """An input file's path as a shared copy records it: relative to `base` (the working folder) or,
    for a bundled config, to netsim's installation (`topologies/ring-8.toml`); any other path keeps
    only its file name, so that no absolute path of this machine leaves in the copy."""
    given = Path(path)
    if not given.is_absolute():
        return path
    for root in (base.resolve(), INSTALLATION):
        if given.resolve().is_relative_to(root):
            return given.resolve().relative_to(root).as_posix()
    return given.name


def listed_table(out_dir: Path, name: str, size: int) -> Path:
    """The table `name` that summary.json lists with `size` bytes, checked to be a plain CSV file in
    `out_dir` itself (not a path elsewhere, nor a link out of the folder) of that size."""
    path = out_dir / name
    inside = (name == Path(name).name and name not in (".", "..") and "\\" not in name and name.endswith(".csv")
              and not path.is_symlink())
    if not inside:
        raise ConfigError(f"{out_dir}: damaged output folder: {SUMMARY} lists {name!r:.80}, not a CSV file name "
                          f"of this folder (netsim reads only the tables in the folder itself)")
    found = path.stat().st_size if path.is_file() else None
    if found != size:
        shown = "missing" if found is None else f"{found} bytes"
        raise ConfigError(f"{out_dir}: damaged output folder: {name} is {shown}, {SUMMARY} lists {size} bytes "
                          f"(a full disk, or a copy cut short?)")
    return path


# keys every summary.json has, and their types; a key whose name ends in a unit holds a number (or
# null: not measured), or a list of them per NPU
SUMMARY_KEYS = {"name": str, "backend": str, "partial": bool, "events": int, "wall_time_s": (int, float)}
NUMBER_SUFFIXES = ("_ns", "_s", "_GBps", "_bytes", "_cycles", "_load", "utilization", "_fraction", "_hops")


def check_summary(summary: dict, path: Path) -> None:
    """A summary.json that lacks netsim's keys or holds a wrong type (e.g. max_link_utilization =
    "high") is a damaged folder: the report would print an empty or bogus table."""
    def is_number(value) -> bool:
        return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))

    for key, kind in SUMMARY_KEYS.items():
        if key not in summary:
            raise ConfigError(f"{path}: damaged or not netsim's: no key '{key}' (every netsim summary has "
                              f"{', '.join(SUMMARY_KEYS)})")
        if not isinstance(summary[key], kind) or (kind is int and isinstance(summary[key], bool)):
            raise ConfigError(f"{path}: damaged or not netsim's: key '{key}' is {summary[key]!r:.40}")
    for key, value in summary.items():
        values = value if isinstance(value, list) else [value]
        if key.endswith(NUMBER_SUFFIXES) and not all(is_number(item) for item in values):
            raise ConfigError(f"{path}: damaged or not netsim's: key '{key}' is {value!r:.40}, expected a number")


def read_table(path: Path) -> pd.DataFrame:
    """One CSV of an output folder, with the columns the report reads; a table with no rows and no
    columns (e.g. no phases) reads as empty."""
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable CSV table ({str(exc).splitlines()[0]})") from None
    missing = [column for column in REQUIRED_COLUMNS.get(path.stem, ()) if column not in frame.columns]
    if missing:
        raise ConfigError(f"{path}: damaged or not netsim's: missing column(s) {', '.join(missing)}")
    return frame
