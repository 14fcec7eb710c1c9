"""ASTRA-sim's MODEL and DISTRIBUTED_INFERENCE loops: model parallelism, every activation collective blocks."""

from __future__ import annotations

from typing import Generator

from workload.loops.core import NpuRun, register_loop


def forward_blocking(run: NpuRun, i: int) -> Generator:
    """Layer `i`'s forward: compute, then its forward collective, which the next layer must wait for."""
    layer = run.workload.layers[i]
    yield run.compute(i, "fwd", layer.fwd_compute)
    yield from run.wait(i, "fwd", run.issue(i, "fwd", layer.fwd_comm))


@register_loop("MODEL")
def model_parallel(run: NpuRun) -> Generator:
    """Model parallelism (ASTRA-sim's MODEL loop), collectives over every dimension.

    Forward: wait for the layer's weight-gradient collective of the previous pass (usually none),
    compute, then issue the forward collective (e.g. the all-gather of the layer's output) and
    block on it. Backward, from the last layer: weight-gradient compute and its collective issued
    without blocking; then (not for the first layer) input-gradient compute and its collective,
    blocking, since the previous layer needs the whole input gradient.
    """
    layers = run.workload.layers
    pending = [None] * len(layers)
    for _ in range(run.passes):
        for i in range(len(layers)):
            yield from run.wait(i, "wg", pending[i])
            yield from forward_blocking(run, i)
        for i in reversed(range(len(layers))):
            layer = layers[i]
            yield run.compute(i, "wg", layer.wg_compute)
            pending[i] = run.issue(i, "wg", layer.wg_comm, update_ns=layer.update_time)
            if i > 0:
                yield run.compute(i, "ig", layer.ig_compute)
                yield from run.wait(i, "ig", run.issue(i, "ig", layer.ig_comm))
    for i in range(len(layers)):
        yield from run.wait(i, "wg", pending[i])


@register_loop("DISTRIBUTED_INFERENCE")
def distributed_inference(run: NpuRun) -> Generator:
    """Inference (ASTRA-sim's DISTRIBUTED_INFERENCE): each pass is a forward pass with blocking collectives."""
    for _ in range(run.passes):
        for i in range(len(run.workload.layers)):
            yield from forward_blocking(run, i)
