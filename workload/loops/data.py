"""ASTRA-sim's DATA loop: data parallelism with weight-gradient all-reduces hidden behind backward."""

from __future__ import annotations

from typing import Generator

from workload.loops.bucketing import bucketed_iteration
from workload.loops.core import NpuRun, register_loop
from workload.loops.layerwise import layerwise_training, parallelism_role


@register_loop("DATA", role=parallelism_role)
def data_parallel(run: NpuRun) -> Generator:
    """Data parallelism (ASTRA-sim's DATA loop): workload.loops.layerwise's pass without activation
    collectives, so every weight-gradient all-reduce overlaps the rest of the backward pass.

    With the `bucket_size` option (bytes) the backward pass uses DDP's gradient buckets instead
    (workload.loops.bucketing).
    """
    bucket_size = run.option("bucket_size")
    if bucket_size:
        for _ in range(run.passes):
            yield from bucketed_iteration(run, bucket_size[0])
        return
    yield from layerwise_training(run, blocking_activations=False)
