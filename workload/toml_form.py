"""The TOML workload form: loop and options, then layers with compute times or GEMM shapes.

    [workload]
    loop = "HYBRID_TRANSFORMER"          # any registered loop
    [options]                            # the legacy header's options, TOML-style
    model-parallel-npu-group = 4         # also: stages, micro-batches, chunks, activation-bytes,
    bucket-size = "25MiB"                #   bucket-size, checkpoints = [..], checkpoint-initiates, args
    [roofline]                           # only for layers given as GEMMs
    peak-tflops = 312
    memory-bandwidth = "2039GB/s"
    bytes-per-element = 2
    [[layer]]
    name = "qkv"
    gemm = [2048, 3072, 1024]            # M, N, K; or fwd-compute / ig-compute / wg-compute ("10us")
    fwd-comm = "all-gather"              # per pass: <pass>-comm (kind) and <pass>-comm-size
    fwd-comm-size = "8MiB"
    update-time = "1us"
    parallelism = "DATA"                 # HYBRID_CUSTOMIZED only

Every error names the file, the line and the key.
"""

from __future__ import annotations

import re
from pathlib import Path

from netsim.config import Source, did_you_mean, positive_float, positive_int, read_toml
from netsim.errors import ConfigError
from netsim.units import UnitError, parse_bandwidth, parse_size, parse_time
from workload.model import COMM_TYPES, MAX_FIELD, Comm, Layer, Workload
from workload.roofline import Roofline

SIZE_OPTIONS = {"bucket_size", "activation_bytes"}
# Every header option a training loop reads (legacy header spelling).
KNOWN_OPTIONS = {"args", "bucket_size", "activation_bytes", "model_parallel_NPU_group", "checkpoints",
                 "checkpoint_initiates", "stages", "micro_batches", "chunks", "tensor_parallel"}
COUNTED_OPTIONS = {"checkpoints", "checkpoint_initiates"}  # legacy form: count, then the items
LAYER_KEYS = {"name", "gemm", "fwd-compute", "ig-compute", "wg-compute", "fwd-comm", "fwd-comm-size", "ig-comm",
              "ig-comm-size", "wg-comm", "wg-comm-size", "update-time", "parallelism", "reserved"}
COMM_KINDS = {kind for kind in COMM_TYPES.values() if kind} | {"none"}
WORKLOAD_KEYS = ("loop", "name")


def option_name(key: str) -> str:
    """'model-parallel-npu-group' -> 'model_parallel_NPU_group' (the legacy header's spelling)."""
    name = key.replace("-", "_")
    return "model_parallel_NPU_group" if name.lower() == "model_parallel_npu_group" else name


def option_value(name: str, value) -> list[int]:
    """A TOML option value as the legacy header's list of integers; sizes may carry units."""
    if name in SIZE_OPTIONS:
        return [parse_size(value)]
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        raise ValueError(f"expected an integer or a list of integers, got {value!r}")
    return [len(items), *items] if name in COUNTED_OPTIONS else list(items)


class _Where:
    """Lines of keys in the file: [[layer]] entries are told apart by their order."""

    def __init__(self, source: Source):
        self.source = source
        self.layer_starts = [n for n, line in enumerate(source.text.splitlines(), start=1)
                             if re.match(r"^\s*\[\[\s*layer\s*\]\]", line)]

    def layer(self, index: int, key: str) -> str:
        lines = self.source.text.splitlines()
        start = self.layer_starts[index] if index < len(self.layer_starts) else 1
        end = self.layer_starts[index + 1] if index + 1 < len(self.layer_starts) else len(lines) + 1
        for number in range(start, end):
            if re.match(rf"^\s*{re.escape(key)}\s*=", lines[number - 1]):
                return f"{self.source.path}:{number}: layer {index} key '{key}'"
        return f"{self.source.path}:{start}: layer {index} key '{key}'"

    def key(self, dotted: str) -> str:
        return f"{self.source.where(dotted)}: key '{dotted}'"


def _time(value, where: str) -> float:
    try:
        return parse_time(value)
    except (UnitError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _roofline(table: dict, where: _Where) -> Roofline:
    known = {"peak-tflops", "memory-bandwidth", "bytes-per-element"}
    for key in table:
        if key not in known:
            raise ConfigError(f"{where.key('roofline.' + key)}: unknown key{did_you_mean(key, known)}")
    try:
        return Roofline(positive_float(table.get("peak-tflops", Roofline.peak_tflops)),
                        parse_bandwidth(table.get("memory-bandwidth", Roofline.memory_GBps)),
                        positive_int(table.get("bytes-per-element", Roofline.bytes_per_element)))
    except (UnitError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where.key('roofline')}: {exc}") from None


def _layer(entry: dict, index: int, where: _Where, roofline: Roofline) -> Layer:
    for key in entry:
        if key not in LAYER_KEYS:
            raise ConfigError(f"{where.layer(index, key)}: unknown key{did_you_mean(key, LAYER_KEYS)}")
    if "gemm" in entry:
        shape = entry["gemm"]
        if not (isinstance(shape, list) and len(shape) == 3 and all(isinstance(v, int) and v > 0 for v in shape)):
            raise ConfigError(f"{where.layer(index, 'gemm')}: expected [M, N, K] positive integers, got {shape!r}")
        times = roofline.passes_ns(*shape)
        if max(times) > MAX_FIELD:
            raise ConfigError(f"{where.layer(index, 'gemm')}: the GEMM {shape} takes {max(times):.3g} ns to compute, "
                              f"beyond 2^63 - 1 ns (292 years), more than a workload can hold: are the dimensions "
                              f"right?")
    else:
        times = tuple(_time(entry.get(f"{p}-compute", 0), where.layer(index, f"{p}-compute"))
                      for p in ("fwd", "ig", "wg"))
    comms = []
    for phase in ("fwd", "ig", "wg"):
        kind = str(entry.get(f"{phase}-comm", "none")).lower()
        if kind not in COMM_KINDS:
            raise ConfigError(f"{where.layer(index, phase + '-comm')}: expected one of {', '.join(sorted(COMM_KINDS))}"
                              f", got {kind!r}")
        try:
            size = parse_size(entry.get(f"{phase}-comm-size", 0))
        except (UnitError, TypeError, ValueError) as exc:
            raise ConfigError(f"{where.layer(index, phase + '-comm-size')}: {exc}") from None
        comms.append(Comm(None if kind == "none" else kind, size))
    start = where.layer_starts[index] if index < len(where.layer_starts) else 0
    name = entry.get("name", f"layer{index}")
    reserved = entry.get("reserved", -1)
    parallelism = entry.get("parallelism")
    if not isinstance(name, str):
        raise ConfigError(f"{where.layer(index, 'name')}: expected a string, got {name!r}")
    if isinstance(reserved, bool) or not isinstance(reserved, int) or not -1 <= reserved < index:
        raise ConfigError(f"{where.layer(index, 'reserved')}: expected -1 or the index of an earlier layer, "
                          f"got {reserved!r}")
    if parallelism is not None and not isinstance(parallelism, str):
        raise ConfigError(f"{where.layer(index, 'parallelism')}: expected a strategy name such as \"DATA\", "
                          f"got {parallelism!r}")
    return Layer(name, reserved, times[0], comms[0], times[1], comms[1], times[2], comms[2],
                 _time(entry.get("update-time", 0), where.layer(index, "update-time")), parallelism, start)


def parse_toml_workload(path: Path) -> Workload:
    """Read a TOML workload into the same `Workload` the legacy parser builds."""
    table, source = read_toml(path)
    where = _Where(source)
    for key in table:
        if key not in ("workload", "options", "roofline", "layer"):
            raise ConfigError(f"{where.key(key)}: unknown key (expected the tables [workload], [options], [roofline] "
                              f"and [[layer]]){did_you_mean(key, ('workload', 'options', 'roofline', 'layer'))}")
    head, options_table, roofline_table = (_table(table, key, where) for key in ("workload", "options", "roofline"))
    for key in head:
        if key not in WORKLOAD_KEYS:
            raise ConfigError(f"{where.key('workload.' + key)}: unknown key (expected loop, name)"
                              f"{did_you_mean(key, WORKLOAD_KEYS)}")
    loop, name = head.get("loop"), head.get("name", path.stem)
    if not isinstance(loop, str):
        raise ConfigError(f"{where.key('workload.loop')}: expected the training loop's name, e.g. \"DATA\"")
    if not isinstance(name, str):
        raise ConfigError(f"{where.key('workload.name')}: expected a string, got {name!r}")
    options = {}
    for key, value in options_table.items():
        name_of_option = option_name(key)
        try:
            options[name_of_option] = option_value(name_of_option, value)
        except (UnitError, ValueError) as exc:
            raise ConfigError(f"{where.key('options.' + key)}: {exc}") from None
    entries = table.get("layer", [])
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        raise ConfigError(f"{where.key('layer')}: expected [[layer]] tables, got {entries!r:.60}")
    if not entries:
        raise ConfigError(f"{path}: no [[layer]] entries")
    roofline = _roofline(roofline_table, where)
    layers = tuple(_layer(entry, i, where, roofline) for i, entry in enumerate(entries))
    return Workload(name, loop.upper(), layers, options, str(path))


def _table(table: dict, key: str, where: _Where) -> dict:
    """The TOML table `key` of the file (empty when absent); anything else is a one-line error."""
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where.key(key)}: expected the table [{key}], got {value!r:.60}")
    return value
