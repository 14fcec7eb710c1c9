"""ASTRA-sim's hybrid loops: model parallelism inside a group, data parallelism across groups.

HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_TRANSFORMER and HYBRID_CUSTOMIZED share one
ordering (ASTRA-sim v1's) and differ in which NPUs each pass's collective spans
(workload.communicators) and in whether the input-gradient collective blocks:

- forward, layer i: wait for layer i's weight-gradient collective of the previous pass (and its
  update time); compute; issue the forward collective (model group) and block on it;
- backward, layer i from the last: input-gradient compute (every layer, the first too, as
  ASTRA-sim does) and its collective (model group): issued without blocking except for the first
  layer, which has none (DATA_MODEL, MODEL_DATA, CUSTOMIZED), or issued for every layer and
  blocked on at once (TRANSFORMER); weight-gradient compute and its collective (data group),
  issued without blocking; then block on layer i's input-gradient collective, which the layer
  below needs (the weight-gradient compute overlapped it);
- the run ends when every weight-gradient collective is done.

Every collective of a layer completes the layer's update time after its network part.
HYBRID_TRANSFORMER_FWD_IN_BCKWD adds activation recompute (`recompute_segments`).
"""

from __future__ import annotations

from typing import Generator

from netsim.errors import ConfigError
from system.lockstep import Role
from workload.communicators import PassComms, pass_comms, pass_role
from workload.loops.core import NpuRun, register_loop
from workload.loops.layerwise import parallelism_role, uniform_comms


def _where(run: NpuRun) -> str:
    return run.workload.path or run.workload.name


def hybrid_loop(run: NpuRun, comms: list[PassComms], blocking_ig: bool = False,
                recompute: dict | None = None) -> Generator:
    """The shared hybrid ordering; `blocking_ig`: TRANSFORMER's input-gradient collectives (every
    layer's, blocking); `recompute` maps a layer to the first layer of the forward segment to
    recompute (from its checkpoint) just before that layer's backward starts."""
    layers = run.workload.layers
    wg_pending = [None] * len(layers)
    for _ in range(run.passes):
        for i in range(len(layers)):
            yield from run.wait(i, "wg", wg_pending[i])
            yield from _forward(run, comms, i)
        for i in reversed(range(len(layers))):
            layer = layers[i]
            if recompute and i in recompute:
                for j in range(recompute[i], i):
                    yield from _forward(run, comms, j)
            yield run.compute(i, "ig", layer.ig_compute)
            ig = comms[i].ig.issue(run, i, "ig", layer.ig_comm) if blocking_ig or i > 0 else None
            if blocking_ig:
                yield from run.wait(i, "ig", ig)
            yield run.compute(i, "wg", layer.wg_compute)
            wg_pending[i] = comms[i].wg.issue(run, i, "wg", layer.wg_comm)
            yield from run.wait(i, "ig", ig)
    for i in range(len(layers)):
        yield from run.wait(i, "wg", wg_pending[i])


def _forward(run: NpuRun, comms: list[PassComms], i: int) -> Generator:
    layer = run.workload.layers[i]
    yield run.compute(i, "fwd", layer.fwd_compute)
    yield from run.wait(i, "fwd", comms[i].fwd.issue(run, i, "fwd", layer.fwd_comm))


@register_loop("HYBRID_DATA_MODEL", role=parallelism_role)
def hybrid_data_model(run: NpuRun) -> Generator:
    """Model parallel along dimension 0, data parallel along the others."""
    yield from hybrid_loop(run, uniform_comms(run))


@register_loop("HYBRID_MODEL_DATA", role=parallelism_role)
def hybrid_model_data(run: NpuRun) -> Generator:
    """Data parallel along dimension 0, model parallel along the others."""
    yield from hybrid_loop(run, uniform_comms(run))


@register_loop("HYBRID_TRANSFORMER", role=parallelism_role)
def hybrid_transformer(run: NpuRun) -> Generator:
    """Model parallel within blocks of `model_parallel_NPU_group` NPUs, data parallel across them."""
    yield from hybrid_loop(run, uniform_comms(run), blocking_ig=True)


def customized_comms(run: NpuRun) -> list[PassComms]:
    """Each layer's communicators, from the parallelism it names."""
    comms = []
    for layer in run.workload.layers:
        where = f"{_where(run)}:{layer.line}"
        if layer.parallelism is None:
            raise ConfigError(f"{where}: HYBRID_CUSTOMIZED needs a parallelism as the layer's 13th field")
        comms.append(pass_comms(layer.parallelism.upper(), run.system.topology, run.npu, run.workload.options,
                                where))
    return comms


def customized_role(run: NpuRun) -> Role:
    return pass_role(run, customized_comms(run))


@register_loop("HYBRID_CUSTOMIZED", role=customized_role)
def hybrid_customized(run: NpuRun) -> Generator:
    """Each layer names its own parallelism (last field: DATA, MODEL, HYBRID_DATA_MODEL, ...)."""
    yield from hybrid_loop(run, customized_comms(run))


def recompute_segments(run: NpuRun) -> dict:
    """Header `checkpoints: K c1..cK checkpoint_initiates: J i1..iJ` -> {initiating layer: segment start}.

    Activations are kept only at checkpoint layers. When the backward pass reaches an initiating
    layer i, the forward pass (compute and its blocking collective) is recomputed from the nearest
    checkpoint c <= i up to i - 1 (ASTRA-sim v1's Forward_In_BackPass state stops at the
    initiating layer), then backward continues. Layer indices are 0-based.
    """
    where = f"{_where(run)}:1"
    count = len(run.workload.layers)
    lists = {}
    for key in ("checkpoints", "checkpoint_initiates"):
        values = run.option(key)
        if not values or values[0] != len(values) - 1:
            raise ConfigError(f"{where}: header: '{key}:' needs a count followed by that many layer indices")
        bad = [v for v in values[1:] if not 0 <= v < count]
        if bad:
            raise ConfigError(f"{where}: header: '{key}:' layer index {bad[0]} is outside 0..{count - 1}")
        lists[key] = sorted(values[1:])
    segments = {}
    for initiate in lists["checkpoint_initiates"]:
        below = [c for c in lists["checkpoints"] if c <= initiate]
        segments[initiate] = below[-1] if below else 0
    return segments


@register_loop("HYBRID_TRANSFORMER_FWD_IN_BCKWD", role=parallelism_role)
def hybrid_transformer_recompute(run: NpuRun) -> Generator:
    """HYBRID_TRANSFORMER with activation recompute from checkpoints during the backward pass."""
    yield from hybrid_loop(run, uniform_comms(run), blocking_ig=True, recompute=recompute_segments(run))
