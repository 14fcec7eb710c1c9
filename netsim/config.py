"""Load TOML (and ASTRA-sim's formats, via `netsim.astra_formats`) into frozen dataclasses.

Every config dataclass declares each key once, as a field whose metadata holds its parser and a
one-line meaning (`setting(...)`). `build(cls, table, source, prefix)` validates a table against
that declaration: unknown keys get a did-you-mean, bad values an error naming file, line, key
and the expected form.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from netsim.budget import check_input_size
from netsim.errors import ConfigError
from netsim.units import UnitError, parse_cycles

CLOCK_RANGE_GHZ = (1e-3, 1e3)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib


# --------------------------------------------------------------------------- value parsers
def as_int(value: Any, minimum: int | None = None) -> int:
    """A whole number (TOML int or a float with no fraction), optionally bounded below."""
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or (isinstance(value, float) and not math.isfinite(value)) or int(value) != value):
        raise UnitError(f"expected a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        raise UnitError(f"expected a whole number >= {minimum}, got {value!r}")
    return int(value)


def positive_int(value: Any) -> int:
    return as_int(value, minimum=1)


def non_negative_int(value: Any) -> int:
    return as_int(value, minimum=0)


def positive_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise UnitError(f"expected a positive number, got {value!r}")
    return float(value)


def clock_frequency(value: Any) -> float:
    """A clock in GHz within CLOCK_RANGE_GHZ (1 MHz to 1 THz): a clock beyond it makes every latency
    round to zero or to more cycles than a run can count."""
    low, high = CLOCK_RANGE_GHZ
    if positive_float(value) < low or value > high:
        raise UnitError(f"expected a clock between {low:g} and {high:g} GHz, got {value!r}")
    return float(value)


def as_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise UnitError(f"expected true or false, got {value!r}")
    return value


def as_str(value: Any) -> str:
    if not isinstance(value, str):
        raise UnitError(f"expected a string, got {value!r}")
    return value


def choice(*options: str) -> Callable[[Any], str]:
    """A parser accepting one of `options` (case-insensitive), returned in its canonical spelling."""

    def parse(value: Any) -> str:
        if isinstance(value, str):
            for option in options:
                if value.lower() == option.lower():
                    return option
        hint = did_you_mean(str(value), options)
        raise UnitError(f"expected one of {', '.join(options)}, got {value!r}{hint}")

    return parse


def as_table(value: Any) -> dict:
    """A TOML table (a dict)."""
    if not isinstance(value, Mapping):
        raise UnitError(f"expected a table, got {value!r}")
    return dict(value)


def list_of(item: Callable[[Any], Any], min_len: int = 1) -> Callable[[Any], tuple]:
    """A parser for a list of items (returned as a tuple)."""

    def parse(value: Any) -> tuple:
        if not isinstance(value, (list, tuple)) or len(value) < min_len:
            raise UnitError(f"expected a list of at least {min_len} item(s), got {value!r}")
        return tuple(item(v) for v in value)

    return parse


def scalar_or_list_of(item: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A parser accepting one value or a list of values (a list becomes a tuple)."""

    def parse(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return tuple(item(v) for v in value)
        return item(value)

    return parse


def setting(default: Any = dataclasses.MISSING, *, parse: Callable[[Any], Any], help: str,
            key: str | None = None, cycles: bool = False) -> Any:
    """Declare a config key: its parser, meaning and default (omit the default to require it).

    `cycles=True` marks a value counted in cycles: it is parsed with the table's `clock_ghz`.
    """
    metadata = {"parse": parse, "help": help, "key": key, "cycles": cycles}
    if default is dataclasses.MISSING:
        return field(metadata=metadata)
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple or a frozen dataclass for mutable defaults")
    return field(default=default, metadata=metadata)


# --------------------------------------------------------------------------- sources
@dataclass
class Source:
    """Where a table came from, so errors can name the file and the line of a key."""

    path: str
    text: str = ""
    overridden: set = field(default_factory=set)  # dotted keys set on the command line

    def line_of(self, dotted_key) -> int | None:
        """Best-effort line number of `dotted_key` ('garnet.vcs') in a TOML text."""
        if not self.text:
            return None
        parts = str(dotted_key).split(".")
        leaf = re.escape(parts[-1])
        table = ".".join(p for p in parts[:-1] if not p.isdecimal())
        current = ""
        fallback = None
        for number, line in enumerate(self.text.splitlines(), start=1):
            header = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?", line)
            if header:
                current = header.group(1).strip()
                continue
            if re.match(rf"^\s*[\"']?{leaf}[\"']?\s*[=:]", line):
                if current == table:
                    return number
                fallback = fallback or number
        return fallback

    def where(self, dotted_key) -> str:
        if dotted_key in self.overridden:
            return f"--set {dotted_key} (over {self.path})"
        line = self.line_of(dotted_key)
        return f"{self.path}:{line}" if line else self.path

    def error(self, dotted_key, message: str) -> ConfigError:
        """A one-line error naming the file, the key's line and the key (any YAML key: 1 is a key too)."""
        return ConfigError(f"{self.where(dotted_key)}: key '{dotted_key}': {message}")


def did_you_mean(word: str, options) -> str:
    import difflib  # (here: only a misspelt key needs it)

    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def toml_key(f: dataclasses.Field) -> str:
    return f.metadata.get("key") or f.name


def settings_of(cls) -> list[dataclasses.Field]:
    """The declared keys of a config dataclass (fields created with `setting`)."""
    return [f for f in dataclasses.fields(cls) if "parse" in f.metadata]


def build(cls, table: Mapping[str, Any], source: Source, prefix: str = ""):
    """Validate `table` against `cls`'s declared settings and return an instance of `cls`."""
    if not isinstance(table, Mapping):
        raise source.error(prefix.rstrip(".") or "(top level)", f"expected a table, got {table!r}")
    declared = {toml_key(f): f for f in settings_of(cls)}
    for key in table:
        if key not in declared:
            raise source.error(f"{prefix}{key}", "unknown key" + did_you_mean(key, declared)
                               + f"; the keys{' of ' + prefix.rstrip('.') if prefix else ''}: {', '.join(declared)}")
    values: dict[str, Any] = {}
    clock = table.get("clock_ghz")
    if clock is not None and any(f.metadata["cycles"] for f in declared.values()):
        try:  # the clock cycle-valued keys are read with, checked first so that its error names it
            clock = clock_frequency(clock)
        except UnitError as exc:
            raise source.error(f"{prefix}clock_ghz", str(exc)) from None
    for key, f in declared.items():
        dotted = f"{prefix}{key}"
        if key not in table:
            if f.default is dataclasses.MISSING:
                raise source.error(dotted, f"missing; expected {f.metadata['help']}")
            continue
        raw = table[key]
        try:
            if f.metadata["cycles"]:
                values[f.name] = f.metadata["parse"](parse_cycles(raw, clock if clock is not None else 1.0))
            else:
                values[f.name] = f.metadata["parse"](raw)
        except UnitError as exc:
            raise source.error(dotted, str(exc)) from None
    return cls(**values)


# --------------------------------------------------------------------------- files
TOO_DEEP = "nested too deeply to read (lists or tables inside each other hundreds of levels deep)"
TOO_LONG = "holds an integer of thousands of digits, too long to read"

def not_a_regular_file(path: Path, what: str = "") -> ConfigError:
    """The one-line error of an input that is a pipe, socket or device (such as /dev/zero), which is
    never read: a FIFO would be read forever, a device without end. `what` names the file expected."""
    return ConfigError(f"{path}: not a regular file (a pipe, socket or device); give a {what + ' ' if what else ''}file")


def read_text(path: Path) -> str:
    """A config or input file's text; a missing, unreadable or non-UTF-8 file is a one-line error, and
    so is one that is no regular file (a FIFO would be read forever, /dev/zero without end) or too
    large to parse in the memory available (netsim.budget)."""
    try:
        status = path.stat()
        if stat.S_ISREG(status.st_mode):
            check_input_size(path, status.st_size)
        elif not stat.S_ISDIR(status.st_mode):
            raise not_a_regular_file(path)
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, expected a file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a UTF-8 text file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None


def read_toml(path: Path) -> tuple[dict, Source]:
    """Read a TOML file; a syntax error names the file and line."""
    text = read_text(path)
    try:
        return tomllib.loads(text), Source(str(path), text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except ValueError:  # Python's limit on the digits of an integer read from text
        raise ConfigError(f"{path}: {TOO_LONG}") from None
    except RecursionError:
        raise ConfigError(f"{path}: {TOO_DEEP}") from None


class RepeatedKey(Exception):
    """A key given twice in one table of a file (raised inside a parser, turned into a ConfigError)."""


def repeated_key(where: str, key: str) -> ConfigError:
    """The one-line error for a key given twice: netsim takes neither value silently."""
    return ConfigError(f"{where}: key '{key}' is given twice; keep one (the first or the last would be taken "
                       f"silently)")


def unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object's key-value pairs as a dict, refusing a repeated key (json's object_pairs_hook)."""
    table: dict = {}
    for key, value in pairs:
        if key in table:
            raise RepeatedKey(key)
        table[key] = value
    return table


def read_json_object(path: Path) -> tuple[dict, Source]:
    """Read a JSON file holding one object; a syntax error or a repeated key names the file and line."""
    text = read_text(path)
    try:
        data = json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKey as exc:
        key = exc.args[0]
        places = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
        line = text.count("\n", 0, places[1]) + 1 if len(places) > 1 else None  # the second time it is given
        raise repeated_key(f"{path}:{line}" if line else str(path), key) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except ValueError:  # Python's limit on the digits of an integer read from text
        raise ConfigError(f"{path}: {TOO_LONG}") from None
    except RecursionError:
        raise ConfigError(f"{path}: {TOO_DEEP}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data, Source(str(path), text)


def parse_override(text: str) -> tuple[list[str], Any]:
    """'garnet.vcs=4' -> (['garnet', 'vcs'], 4). Values are read as TOML, else as a string."""
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected KEY=VALUE, e.g. garnet.vcs=4")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set {text!r}: expected KEY=VALUE with a dotted key, e.g. garnet.vcs=4")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    except ValueError:  # Python's limit on the digits of an integer read from text
        raise ConfigError(f"--set {key}: {TOO_LONG}") from None
    except RecursionError:
        raise ConfigError(f"--set {key}: {TOO_DEEP}") from None
    return key.split("."), value


LABEL_LIMIT = 60  # a longer overrides label is replaced by a hash of the overrides


def overrides_label(overrides) -> str:
    """`--set` overrides ((path, value) pairs) as a short suffix for a run's name, so runs with
    different settings are named (and their default folders placed) apart: `+dims=16x16+vcs=2`.
    A key is shown without its table (`topology.`, `garnet.`); a list as its items joined by `x`.
    Longer than LABEL_LIMIT characters: `+set-` and a hash of the overrides."""
    parts = []
    for path, value in overrides:
        key = ".".join(path[1:] if len(path) > 1 else path)
        shown = "x".join(map(str, value)) if isinstance(value, (list, tuple)) else json.dumps(value).strip('"')
        parts.append(f"+{key}={shown}")
    label = "".join(parts)
    if len(label) > LABEL_LIMIT:
        digest = hashlib.sha1(json.dumps([[list(p), v] for p, v in overrides], sort_keys=True).encode()).hexdigest()
        label = f"+set-{digest[:10]}"
    return label


def apply_override(table: dict, path: list[str], value: Any) -> None:
    """Set table[path[0]][path[1]]... = value, creating sub-tables as needed."""
    node = table
    for part in path[:-1]:
        child = node.get(part)
        if isinstance(child, list) and part != path[-1]:
            raise ConfigError(f"--set {'.'.join(path)}: '{part}' is a list; override the whole list")
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[path[-1]] = value
