"""ASTRA-sim's MODEL and DISTRIBUTED_INFERENCE loops: model parallelism, every activation collective blocks."""

from __future__ import annotations

from typing import Generator

from workload.loops.core import NpuRun, register_loop
from workload.loops.layerwise import forward_blocking, layerwise_training, parallelism_comms, parallelism_role


@register_loop("MODEL", role=parallelism_role)
def model_parallel(run: NpuRun) -> Generator:
    """Model parallelism (ASTRA-sim's MODEL loop), collectives over every dimension: workload.loops.layerwise's
    pass with blocking activation collectives (e.g. the all-gather of a layer's output)."""
    yield from layerwise_training(run, blocking_activations=True)


@register_loop("DISTRIBUTED_INFERENCE", role=parallelism_role)
def distributed_inference(run: NpuRun) -> Generator:
    """Inference (ASTRA-sim's DISTRIBUTED_INFERENCE): each pass is a forward pass with blocking collectives."""
    comms = parallelism_comms(run)
    for _ in range(run.passes):
        for i in range(len(run.workload.layers)):
            yield from forward_blocking(run, comms, i)
