"""The layer-by-layer training pass that ASTRA-sim's DATA and MODEL loops share.

Forward, layer by layer: wait for the layer's weight-gradient collective of the previous pass
(and its update time), compute, and - when activations are sharded (MODEL) - issue the forward
collective and block on it. Backward, from the last layer: weight-gradient compute, issue its
collective without blocking, then (not for the first layer, which has no input gradient to pass
on) input-gradient compute and - when sharded - its collective, blocking, since the previous
layer needs the whole input gradient. The run ends when every weight-gradient collective is done.
"""

from __future__ import annotations

from typing import Generator

from workload.loops.core import NpuRun


def forward_blocking(run: NpuRun, i: int) -> Generator:
    """Layer `i`'s forward: compute, then its forward collective, which the next layer must wait for."""
    layer = run.workload.layers[i]
    yield run.compute(i, "fwd", layer.fwd_compute)
    yield from run.wait(i, "fwd", run.issue(i, "fwd", layer.fwd_comm))


def layerwise_training(run: NpuRun, blocking_activations: bool) -> Generator:
    """`run.passes` passes as the module docstring describes; activation collectives only when asked."""
    layers = run.workload.layers
    pending = [None] * len(layers)
    for _ in range(run.passes):
        for i, layer in enumerate(layers):
            yield from run.wait(i, "wg", pending[i])
            if blocking_activations:
                yield from forward_blocking(run, i)
            else:
                yield run.compute(i, "fwd", layer.fwd_compute)
        for i in reversed(range(len(layers))):
            layer = layers[i]
            yield run.compute(i, "wg", layer.wg_compute)
            pending[i] = run.issue(i, "wg", layer.wg_comm, update_ns=layer.update_time)
            if i > 0:
                yield run.compute(i, "ig", layer.ig_compute)
                if blocking_activations:
                    yield from run.wait(i, "ig", run.issue(i, "ig", layer.ig_comm))
    for i in range(len(layers)):
        yield from run.wait(i, "wg", pending[i])
