"""Parse ASTRA-sim's legacy workload text format.

    DATA                                   <- loop keyword, then optional header options
    54                                     <- number of layers
    conv1 -1 13003 NONE 0 12864 NONE 0 32291 ALLREDUCE 37632 3229
     name reserved fwd-compute fwd-type fwd-size ig-compute ig-type ig-size wg-compute wg-type wg-size update-time
                                           [per-layer parallelism, HYBRID_CUSTOMIZED only]

Compute times are cycles (= ns), sizes bytes. Every error names the file and line.

The reserved field is ASTRA-sim's layer dependency column, which ASTRA-sim reads and ignores:
-1 (no dependency beyond the previous layer) or the index of an earlier layer, which the
sequential layer order always satisfies. Anything else is an error. The update time is the
time a layer's weight update takes once its weight-gradient collective is done; the loops add it
to that collective's completion, so the next forward of the layer waits for it (counted as
exposed weight-gradient communication, as in ASTRA-sim).
"""

from __future__ import annotations

import math
from pathlib import Path

import warnings

from netsim.config import did_you_mean, read_text
from netsim.errors import ConfigError, NetsimWarning
from workload.model import COMM_TYPES, MAX_FIELD, Comm, Layer, Workload
from workload.toml_form import KNOWN_OPTIONS

# header options of ASTRA-sim 2.x's workloads that no netsim loop models (expert, pipeline and virtual
# pipeline degrees, gradient accumulation, the GPU count): read and ignored with a warning
IGNORED_ASTRA_OPTIONS = {"ep", "pp", "vpp", "ga", "all_gpus"}
LAYER_FIELDS = ("name", "reserved", "fwd compute", "fwd comm type", "fwd comm size", "ig compute", "ig comm type",
                "ig comm size", "wg compute", "wg comm type", "wg comm size", "update time")


def parse_header(tokens: list[str]) -> dict:
    """'HYBRID_TRANSFORMER model_parallel_NPU_group: 4 checkpoints: 2 2 11' -> options dict.

    A key ends with ':' and takes the integers after it; bare integers after the keyword are kept
    under 'args' (e.g. HYBRID_DLRM's last bottom layer). A key no loop reads is an error (a
    misspelt 'bucket_size:' would otherwise be ignored), but for ASTRA-sim 2.x's that netsim does
    not model (IGNORED_ASTRA_OPTIONS: a warning); a key given twice is an error.
    """
    options: dict = {}
    key = "args"
    for token in tokens:
        if token.endswith(":"):
            key = token[:-1]
            if key in options:
                raise ValueError(f"option '{token}' is given twice; keep one")
            if key in IGNORED_ASTRA_OPTIONS:
                warnings.warn(f"workload header option '{token}' (ASTRA-sim 2.x) is not modelled by netsim; "
                              f"ignored", NetsimWarning, stacklevel=2)
            elif key not in KNOWN_OPTIONS:
                raise ValueError(f"unknown option '{token}'{did_you_mean(key, sorted(KNOWN_OPTIONS))} (netsim "
                                 f"reads {', '.join(name + ':' for name in sorted(KNOWN_OPTIONS - {'args'}))})")
            options[key] = []
        else:
            try:
                options.setdefault(key, []).append(int(token))
            except ValueError:
                raise ValueError(f"expected an integer after '{key}:', got {token!r}") from None
    return options


def _int_field(token: str, field: str, where: str) -> int:
    """A whole number (written as an integer or a float with no fraction), within 64 bits as ASTRA-sim reads it."""
    try:
        value = int(token)
    except ValueError:
        try:
            number = float(token)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and number == int(number)):
            raise ConfigError(f"{where}: field '{field}': expected an integer, got {token!r}") from None
        value = int(number)
    if abs(value) > MAX_FIELD:
        raise ConfigError(f"{where}: field '{field}': {token} is out of range (at most 2^63 - 1)")
    return value


def _comm(type_token: str, size_token: str, field: str, where: str) -> Comm:
    kind = type_token.upper()
    if kind not in COMM_TYPES:
        raise ConfigError(f"{where}: field '{field}': expected one of {', '.join(COMM_TYPES)}, got {type_token!r}")
    size = _int_field(size_token, field.replace("type", "size"), where)
    if size < 0:
        raise ConfigError(f"{where}: field '{field.replace('type', 'size')}': expected a size >= 0, got {size}")
    return Comm(COMM_TYPES[kind], size)


def parse_layer(tokens: list[str], where: str, line: int, loop: str) -> Layer:
    if len(tokens) < len(LAYER_FIELDS):
        missing = LAYER_FIELDS[len(tokens)]
        raise ConfigError(f"{where}: expected {len(LAYER_FIELDS)} fields per layer, got {len(tokens)} "
                          f"(missing '{missing}')")
    if len(tokens) > len(LAYER_FIELDS) + 1:
        raise ConfigError(f"{where}: expected {len(LAYER_FIELDS)} fields (+ optional parallelism), got {len(tokens)}")
    if len(tokens) > len(LAYER_FIELDS) and loop != "HYBRID_CUSTOMIZED":
        raise ConfigError(f"{where}: column {len(tokens)} ({tokens[-1]!r}): a layer's own parallelism applies to "
                          f"HYBRID_CUSTOMIZED only; this workload's loop is {loop} (remove the column)")
    ints = {}
    for index in (1, 2, 5, 8, 11):
        ints[index] = _int_field(tokens[index], LAYER_FIELDS[index], where)
        if index != 1 and ints[index] < 0:
            raise ConfigError(f"{where}: field '{LAYER_FIELDS[index]}': expected a time >= 0, got {ints[index]}")
    return Layer(
        name=tokens[0], reserved=ints[1],
        fwd_compute=ints[2], fwd_comm=_comm(tokens[3], tokens[4], "fwd comm type", where),
        ig_compute=ints[5], ig_comm=_comm(tokens[6], tokens[7], "ig comm type", where),
        wg_compute=ints[8], wg_comm=_comm(tokens[9], tokens[10], "wg comm type", where),
        update_time=ints[11], parallelism=tokens[12] if len(tokens) > 12 else None, line=line)


def parse_legacy_workload(path: Path) -> Workload:
    lines = read_text(path).splitlines()
    content = [(n, line.split()) for n, line in enumerate(lines, start=1) if line.strip()]
    if len(content) < 2:
        raise ConfigError(f"{path}: expected a header line and a layer count")
    header_line, header = content[0]
    try:
        options = parse_header(header[1:])
    except ValueError as exc:
        raise ConfigError(f"{path}:{header_line}: header: {exc}") from None
    count_line, count_tokens = content[1]
    if len(count_tokens) != 1 or not count_tokens[0].isdecimal():
        raise ConfigError(f"{path}:{count_line}: expected the number of layers, got {' '.join(count_tokens)!r}")
    count = int(count_tokens[0])
    if count < 1:
        raise ConfigError(f"{path}:{count_line}: expected at least one layer, got {count}")
    layer_lines = content[2:]
    if len(layer_lines) != count:
        raise ConfigError(f"{path}:{count_line}: says {count} layers but the file has {len(layer_lines)}")
    layers = tuple(parse_layer(tokens, f"{path}:{n}", n, header[0].upper()) for n, tokens in layer_lines)
    for index, layer in enumerate(layers):
        if not -1 <= layer.reserved < index:
            raise ConfigError(f"{path}:{layer.line}: field 'reserved': expected -1 or the index of an earlier "
                              f"layer (0..{index - 1}), got {layer.reserved}")
    return Workload(path.name.rsplit(".", 1)[0], header[0].upper(), layers, options, str(path))
