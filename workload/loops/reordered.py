"""The worked example of "add your own training loop" (README): data parallelism, reordered backward.

From the seed exercise: per layer, the backward pass computes the input gradient *before* the
weight gradient, so the previous layer can start as early as possible, and the weight-gradient
collective is issued after both. Registered with `register_loop` (a user's module imports it from
`workload`, as the docs show; this built-in one from `workload.loops`, which `workload` imports).
"""

from __future__ import annotations

from typing import Generator

from workload.loops import NpuRun, register_loop


@register_loop("DATA_REORDERED")
def data_parallel_reordered(run: NpuRun) -> Generator:
    """DATA with backward per layer: input-gradient compute, weight-gradient compute, issue the all-reduce."""
    layers = run.workload.layers
    pending = [None] * len(layers)
    for _ in range(run.passes):
        for i, layer in enumerate(layers):
            yield from run.wait(i, "wg", pending[i])  # blocking: this layer's weights must be updated
            yield run.compute(i, "fwd", layer.fwd_compute)
        for i in reversed(range(len(layers))):
            layer = layers[i]
            if i > 0:
                yield run.compute(i, "ig", layer.ig_compute)
            yield run.compute(i, "wg", layer.wg_compute)
            pending[i] = run.issue(i, "wg", layer.wg_comm)  # not blocking
    for i in range(len(layers)):
        yield from run.wait(i, "wg", pending[i])
