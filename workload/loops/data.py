"""ASTRA-sim's DATA loop: data parallelism with weight-gradient all-reduces hidden behind backward."""

from __future__ import annotations

from typing import Generator

import simpy

from workload.loops.bucketing import bucketed_iteration
from workload.loops.core import NpuRun, register_loop


@register_loop("DATA")
def data_parallel(run: NpuRun) -> Generator:
    """Data parallelism (ASTRA-sim's DATA loop).

    Forward, layer by layer: first wait for the layer's weight-gradient all-reduce of the previous
    pass (and its update time), then compute. Backward, from the last layer: weight-gradient
    compute, issue its collective without blocking, then input-gradient compute (skipped for the
    first layer, which has no input gradient to pass on). The run ends when every outstanding
    collective is done.

    With the `bucket_size` option (bytes) the backward pass uses DDP's gradient buckets instead
    (workload.loops.bucketing).
    """
    bucket_size = run.option("bucket_size")
    if bucket_size:
        for _ in range(run.passes):
            yield from bucketed_iteration(run, bucket_size[0])
        return
    layers = run.workload.layers
    pending: list[simpy.Event | None] = [None] * len(layers)
    for _ in range(run.passes):
        for i, layer in enumerate(layers):
            yield from run.wait(i, "wg", pending[i])
            yield run.compute(i, "fwd", layer.fwd_compute)
        for i in reversed(range(len(layers))):
            layer = layers[i]
            yield run.compute(i, "wg", layer.wg_compute)
            pending[i] = run.issue(i, "wg", layer.wg_comm, update_ns=layer.update_time)
            if i > 0:
                yield run.compute(i, "ig", layer.ig_compute)
    for i in range(len(layers)):
        yield from run.wait(i, "wg", pending[i])
