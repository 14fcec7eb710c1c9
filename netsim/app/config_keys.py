"""Every config key as declared (`netsim.config.setting`): its table, unit, default and meaning, for
`netsim list --keys` and the generated reference page docs/config-keys.md (SST Merlin's rule: a
parameter is declared once, and its documentation is made from that declaration).

A key's unit is read from its declaration: counted in cycles (`cycles=True`), parsed by a unit
parser (`parse_bandwidth`: GB/s, `parse_time`: ns, `parse_size`: bytes, also when wrapped in a
list or a lambda), or named by its key's suffix (`_ghz`, `_bytes`, `_flits`, `_cycles`).
"""

from __future__ import annotations

import dataclasses
import json

from netsim.config import settings_of, toml_key
from netsim.units import parse_bandwidth, parse_size, parse_time

PARSER_UNITS = {parse_bandwidth: "GB/s", parse_time: "ns", parse_size: "bytes"}
SUFFIX_UNITS = {"_ghz": "GHz", "_bytes": "bytes", "_flits": "flits", "_cycles": "cycles"}
COLUMNS = ("table", "key", "unit", "default", "meaning")


def _parser_unit(parse) -> str:
    """The unit of values read by `parse`: a unit parser's, or that of one it wraps (a list of
    them) or calls itself (a lambda around one)."""
    if parse in PARSER_UNITS:
        return PARSER_UNITS[parse]
    for cell in getattr(parse, "__closure__", None) or ():
        if callable(cell.cell_contents) and (unit := _parser_unit(cell.cell_contents)):
            return unit
    code, module = getattr(parse, "__code__", None), getattr(parse, "__globals__", {})
    called = [module.get(name) for name in (code.co_names if code else ())]
    return next((PARSER_UNITS[f] for f in called if f in PARSER_UNITS), "")


def key_unit(field: dataclasses.Field) -> str:
    """A declared key's unit ('' for counts, names and choices); see the module docstring."""
    if field.metadata.get("cycles"):
        return "cycles"
    unit = _parser_unit(field.metadata["parse"])
    if unit:
        return unit
    name = toml_key(field)
    return next((unit for suffix, unit in SUFFIX_UNITS.items() if name.endswith(suffix)), "")


def key_default(field: dataclasses.Field) -> str:
    """A declared key's default as it would be written in TOML: 'required' when it has none,
    'unset' when left out by default (the meaning says what then: most are derived)."""
    if field.default is dataclasses.MISSING:
        return "required"
    if field.default is None:
        return "unset"
    value = list(field.default) if isinstance(field.default, tuple) else field.default
    return json.dumps(value)


def config_keys(tables: dict[str, type]) -> list[dict]:
    """One row per declared key of each config dataclass in `tables` (table name: class), in
    declaration order: table, key, unit, default, meaning."""
    return [{"table": table, "key": toml_key(field), "unit": key_unit(field), "default": key_default(field),
             "meaning": field.metadata["help"]}
            for table, cls in tables.items() for field in settings_of(cls)]


def keys_markdown(rows: list[dict]) -> str:
    """The rows as the reference page docs/config-keys.md (generated: do not edit by hand)."""
    lines = ["# Config keys", "",
             "Generated from the declarations by `python scripts/generate_docs.py`; do not edit by hand.",
             "Every key can be set in its file or on the command line with `--set TABLE.KEY=VALUE` (a network",
             "file's top-level keys and the system keys without a table). Values take units as strings",
             "(`\"64MiB\"`, `\"50GB/s\"`, `\"500ns\"`, `\"3cycles\"`) or plain numbers in the unit shown.", ""]
    for table in dict.fromkeys(row["table"] for row in rows):
        lines += [f"## {table}", "", "| key | unit | default | meaning |", "|---|---|---|---|"]
        for row in rows:
            if row["table"] == table:
                meaning = row["meaning"].replace("|", "\\|")
                default = row["default"] if row["default"] in ("required", "unset") else f"`{row['default']}`"
                lines.append(f"| `{row['key']}` | {row['unit']} | {default} | {meaning} |")
        lines.append("")
    return "\n".join(lines)
