"""`netsim workload gen`: workloads from GEMM shapes or transformer dimensions, timed by a roofline.

- GEMM CSV (columns M, N, K and optionally name, one linear layer per row) with a parallelism:
  DATA all-reduces weight gradients (N*K elements); MODEL splits N across the NPUs, all-gathers
  the forward output (M*N) and all-reduces the input gradient (M*K).
- Transformer (layers, hidden, sequence, micro-batch, tensor/pipeline/data parallel degrees),
  Megatron-style: per block the QKV and FC1 GEMMs are column-parallel and the attention
  projection and FC2 row-parallel, so tensor parallelism all-reduces the activations (seq*mb*hidden)
  after the row-parallel GEMMs in the forward pass and after the column-parallel ones in the
  input-gradient pass; data parallelism all-reduces each GEMM's weight-shard gradient. The loop:
  PIPELINE_1F1B with pipeline parallelism (tensor parallelism inside each stage), else
  HYBRID_TRANSFORMER, MODEL or DATA.

Both write the legacy text format and the TOML form.
"""

from __future__ import annotations

import csv
from pathlib import Path

from netsim.config import read_text
from netsim.errors import ConfigError
from netsim.files import cannot_write, write_whole
from netsim.files import folder_name
from workload.model import MAX_FIELD, Comm, Layer, Workload
from workload.roofline import Roofline

NONE = Comm(None, 0)


def _linear(name: str, shape: tuple[int, int, int], roofline: Roofline, fwd=NONE, ig=NONE, wg=NONE) -> Layer:
    fwd_ns, ig_ns, wg_ns = (round(t) for t in roofline.passes_ns(*shape))
    return Layer(name, -1, fwd_ns, fwd, ig_ns, ig, wg_ns, wg, 0)


def from_gemm_csv(path: Path, parallelism: str, npus: int, roofline: Roofline) -> Workload:
    """One layer per CSV row (M, N, K[, name]) with DATA or MODEL parallelism over `npus` NPUs."""
    if parallelism not in ("DATA", "MODEL"):
        raise ConfigError(f"--parallel {parallelism}: expected DATA or MODEL for a GEMM list")
    reader = csv.DictReader(read_text(path).splitlines())
    bpe = roofline.bytes_per_element
    layers = []
    for row in reader:
        try:
            m, n, k = (int(row[c]) for c in ("M", "N", "K"))
            if min(m, n, k) < 1:
                raise ValueError
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"{path}:{reader.line_num}: expected positive integer columns M, N, K, "
                              f"got {row}") from None
        name = row.get("name") or f"gemm{len(layers) + 1}"
        if parallelism == "DATA":
            layers.append(_linear(name, (m, n, k), roofline, wg=Comm("all-reduce", n * k * bpe)))
        elif n < npus:
            raise ConfigError(f"{path}:{reader.line_num}: N = {n} cannot be split over --npus {npus} "
                              f"(MODEL parallelism gives each NPU N / npus columns)")
        else:
            shard = n // npus
            layers.append(_linear(name, (m, shard, k), roofline, fwd=Comm("all-gather", m * shard * bpe),
                                  ig=Comm("all-reduce", m * k * bpe)))
    if not layers:
        raise ConfigError(f"{path}: no GEMM rows")
    return Workload(path.stem, parallelism, tuple(layers))


def transformer(layers: int, hidden: int, sequence: int, micro_batch: int, tp: int, pp: int, dp: int,
                roofline: Roofline, micro_batches: int = 1) -> Workload:
    """A Megatron-style transformer; the loop follows the parallel degrees (see the module docstring)."""
    if min(layers, hidden, sequence, micro_batch, tp, pp, dp, micro_batches) < 1:
        raise ConfigError("workload gen: every dimension and parallel degree must be >= 1")
    if hidden % tp:
        raise ConfigError(f"workload gen: hidden size {hidden} is not divisible by tensor parallel degree {tp}")
    bpe = roofline.bytes_per_element
    tokens = sequence * micro_batch
    activation = tokens * hidden * bpe
    tp_ar = Comm("all-reduce", activation) if tp > 1 else NONE

    def grads(n: int, k: int) -> Comm:
        return Comm("all-reduce", n * k * bpe) if dp > 1 else NONE

    body = []
    for b in range(layers):
        h = hidden
        body += [
            _linear(f"qkv{b}", (tokens, 3 * h // tp, h), roofline, ig=tp_ar, wg=grads(3 * h // tp, h)),
            _linear(f"proj{b}", (tokens, h, h // tp), roofline, fwd=tp_ar, wg=grads(h, h // tp)),
            _linear(f"fc1_{b}", (tokens, 4 * h // tp, h), roofline, ig=tp_ar, wg=grads(4 * h // tp, h)),
            _linear(f"fc2_{b}", (tokens, h, 4 * h // tp), roofline, fwd=tp_ar, wg=grads(h, 4 * h // tp)),
        ]
    if pp > 1:
        loop, options = "PIPELINE_1F1B", {"stages": [pp], "micro_batches": [micro_batches],
                                          "activation_bytes": [activation]}
        if tp > 1:
            options["tensor_parallel"] = [tp]
    elif tp > 1 and dp > 1:
        loop, options = "HYBRID_TRANSFORMER", {"model_parallel_NPU_group": [tp]}
    else:
        loop, options = ("MODEL" if tp > 1 else "DATA"), {}
    return Workload(f"transformer-{layers}x{hidden}-tp{tp}-pp{pp}-dp{dp}", loop, tuple(body), options)


def _legacy_comm(comm: Comm) -> str:
    names = {"all-reduce": "ALLREDUCE", "all-gather": "ALLGATHER", "reduce-scatter": "REDUCESCATTER",
             "all-to-all": "ALLTOALL"}
    return f"{names[comm.kind]} {comm.nbytes}" if comm.active else "NONE 0"


def to_legacy(workload: Workload) -> str:
    """The legacy ASTRA-sim text (header options as 'key: values'; counts kept as the header has them)."""
    options = " ".join(f"{k}: {' '.join(map(str, v))}" for k, v in workload.options.items() if k != "args")
    args = " ".join(map(str, workload.options.get("args", [])))
    lines = [" ".join(x for x in (workload.parallelism, args, options) if x), str(len(workload.layers))]
    for layer in workload.layers:
        lines.append(f"{layer.name} {layer.reserved} {round(layer.fwd_compute)} {_legacy_comm(layer.fwd_comm)} "
                     f"{round(layer.ig_compute)} {_legacy_comm(layer.ig_comm)} {round(layer.wg_compute)} "
                     f"{_legacy_comm(layer.wg_comm)} {round(layer.update_time)}"
                     + (f" {layer.parallelism}" if layer.parallelism else ""))
    return "\n".join(lines) + "\n"


def to_toml(workload: Workload) -> str:
    """The TOML form (workload.toml_form) of `workload`."""
    lines = ["[workload]", f'name = "{workload.name}"', f'loop = "{workload.parallelism}"', ""]
    if workload.options:
        lines.append("[options]")
        for key, values in workload.options.items():
            items = values[1:] if key in ("checkpoints", "checkpoint_initiates") else values
            value = str(items[0]) if len(items) == 1 and key not in ("checkpoints", "checkpoint_initiates") \
                else "[" + ", ".join(map(str, items)) + "]"
            lines.append(f"{key.replace('_', '-')} = {value}")
        lines.append("")
    for layer in workload.layers:
        lines += ["[[layer]]", f'name = "{layer.name}"']
        for phase in ("fwd", "ig", "wg"):
            lines.append(f"{phase}-compute = {round(getattr(layer, phase + '_compute'))}")
            comm = getattr(layer, phase + "_comm")
            if comm.active:
                lines += [f'{phase}-comm = "{comm.kind}"', f"{phase}-comm-size = {comm.nbytes}"]
        if layer.update_time:
            lines.append(f"update-time = {round(layer.update_time)}")
        if layer.parallelism:
            lines.append(f'parallelism = "{layer.parallelism}"')
        lines.append("")
    return "\n".join(lines)


def write(workload: Workload, out_dir: Path) -> tuple[Path, Path]:
    """Write `<name>.txt` (legacy) and `<name>.toml` into `out_dir`; an unwritable place, or a layer
    too large to read back (sizes and times are 64-bit integers, as ASTRA-sim reads them), is a
    one-line error."""
    for layer in workload.layers:
        for field, value in (("fwd compute", layer.fwd_compute), ("ig compute", layer.ig_compute),
                             ("wg compute", layer.wg_compute), ("fwd comm size", layer.fwd_comm.nbytes),
                             ("ig comm size", layer.ig_comm.nbytes), ("wg comm size", layer.wg_comm.nbytes)):
            if value > MAX_FIELD:
                raise ConfigError(f"layer {layer.name}: {field} {value:.3g} is beyond 2^63 - 1, more than a "
                                  f"workload file can hold: are the dimensions right?")
    stem = folder_name(workload.name)  # one safe path component: the files stay in out_dir
    legacy, toml = out_dir / f"{stem}.txt", out_dir / f"{stem}.toml"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(exc.filename or out_dir, exc, "the workload") from None
    write_whole(legacy, to_legacy(workload), "the workload")
    write_whole(toml, to_toml(workload), "the workload")
    return legacy, toml
