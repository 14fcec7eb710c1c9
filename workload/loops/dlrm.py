"""ASTRA-sim's DLRM loops: embedding all-to-alls (highest priority) beside data-parallel MLPs.

Layer 0 is the embedding table, layers 1..B the bottom MLP (B = the header's number, e.g.
`HYBRID_DLRM 4`), the rest the interaction and top MLP. Collectives span every dimension.

- forward: the embedding lookup is computed and its all-to-all issued without blocking, at the
  highest priority; the bottom MLP runs meanwhile; the first top layer (B+1) blocks on the
  all-to-all. Each MLP layer first waits for its weight-gradient all-reduce of the previous pass.
- backward, from the last layer: weight-gradient compute, its all-reduce issued without blocking,
  input-gradient compute; after the first top layer's input gradient, the embedding's gradient
  all-to-all is issued (highest priority, not blocking). The embedding layer's update time follows
  that all-to-all, and the next forward's lookup waits for it.
- HYBRID_DLRM_ENHANCED: the next pass's embedding lookup and its all-to-all are started right
  after the embedding gradient all-to-all is done, overlapping the bottom MLP's backward instead of
  waiting for the next forward pass (the lookup runs beside the MLP backward, as on a separate
  memory-bound engine).
"""

from __future__ import annotations

from typing import Generator

from netsim.errors import ConfigError
from workload.communicators import every_dimension_role
from workload.loops.core import NpuRun, register_loop

HIGHEST_PRIORITY = -1  # lower is served first; issue order (>= 1) is the default priority


def _last_bottom_layer(run: NpuRun) -> int:
    args = run.option("args", [])
    count = len(run.workload.layers)
    if len(args) != 1 or not 1 <= args[0] < count - 1:
        raise ConfigError(f"{run.workload.path or run.workload.name}:1: header: {run.workload.parallelism} needs the "
                          f"index of the last bottom-MLP layer (1..{count - 2}), e.g. 'HYBRID_DLRM 4'")
    return args[0]


def _embedding_forward(run: NpuRun) -> Generator:
    """Compute the lookup, start its all-to-all; the event the interaction layer waits for."""
    embedding = run.workload.layers[0]
    yield run.compute(0, "fwd", embedding.fwd_compute)
    return run.issue(0, "fwd", embedding.fwd_comm, priority=HIGHEST_PRIORITY)


def _prefetch(run: NpuRun, gradient_exchange) -> Generator:
    """ENHANCED: once the embedding's gradient all-to-all (and update) are done, look up the next pass."""
    if gradient_exchange is not None:
        yield gradient_exchange
    return (yield from _embedding_forward(run))


def dlrm_loop(run: NpuRun, enhanced: bool) -> Generator:
    """The DLRM ordering of the module docstring; `enhanced` prefetches the next embedding lookup."""
    layers = run.workload.layers
    bottom = _last_bottom_layer(run)
    wg_pending = [None] * len(layers)
    embedding_grad = None
    prefetched = None  # ENHANCED: a process whose value is the next pass's embedding all-to-all
    for iteration in range(run.passes):
        if prefetched is None:
            yield from run.wait(0, "ig", embedding_grad)
            embedding_exchange = yield from _embedding_forward(run)
        else:
            embedding_exchange = yield from _blocked_value(run, prefetched)
        for i in range(1, len(layers)):
            yield from run.wait(i, "wg", wg_pending[i])
            if i == bottom + 1:
                yield from run.wait(0, "fwd", embedding_exchange)
            yield run.compute(i, "fwd", layers[i].fwd_compute)
        for i in reversed(range(len(layers))):
            layer = layers[i]
            yield run.compute(i, "wg", layer.wg_compute)
            wg_pending[i] = run.issue(i, "wg", layer.wg_comm)
            if i == 0:
                continue
            yield run.compute(i, "ig", layer.ig_compute)
            if i == bottom + 1:
                embedding_grad = run.issue(0, "ig", layers[0].ig_comm, priority=HIGHEST_PRIORITY)
                if enhanced and iteration + 1 < run.passes:
                    prefetched = run.env.process(_prefetch(run, embedding_grad))
    yield from run.wait(0, "ig", embedding_grad)
    for i in range(len(layers)):
        yield from run.wait(i, "wg", wg_pending[i])


def _blocked_value(run: NpuRun, process) -> Generator:
    """Wait for the prefetch process (exposed embedding time if it is late) and return its all-to-all."""
    yield from run.wait(0, "fwd", process)
    return process.value


@register_loop("HYBRID_DLRM", role=every_dimension_role)
def hybrid_dlrm(run: NpuRun) -> Generator:
    """DLRM: embedding all-to-all overlapped with the bottom MLP, blocking at the interaction layer."""
    yield from dlrm_loop(run, enhanced=False)


@register_loop("HYBRID_DLRM_ENHANCED", role=every_dimension_role)
def hybrid_dlrm_enhanced(run: NpuRun) -> Generator:
    """DLRM with the next pass's embedding lookup prefetched during the bottom MLP's backward."""
    yield from dlrm_loop(run, enhanced=True)
