"""PyTorch-DDP gradient bucketing for the data-parallel loop (`bucket_size` workload option, bytes).

Backward runs from the last layer; each layer's weight gradient (its wg collective size) is
added to the open bucket right after its weight-gradient compute. When the bucket holds at
least `bucket_size` bytes, one all-reduce of the whole bucket is issued without blocking and a new
bucket opens; the last, partial bucket is issued when backward ends. Before the optimizer step
(the end of the iteration) the loop waits for every bucket; that wait is exposed communication,
charged to the layer that closed the bucket. The bucket's update time is the sum of its layers'.

One huge bucket: a single all-reduce after backward, nothing overlapped. Tiny buckets: many
collectives, each paying its latency. The best size lies in between (the DDP lecture's trade-off;
scripts/bucket_study.py measures it).
"""

from __future__ import annotations

from typing import Generator

from workload.loops.core import NpuRun
from workload.model import Comm


def bucketed_iteration(run: NpuRun, bucket_size: int) -> Generator:
    """One data-parallel iteration (forward, bucketed backward, wait for every bucket)."""
    layers = run.workload.layers
    for i, layer in enumerate(layers):
        yield run.compute(i, "fwd", layer.fwd_compute)
    buckets: list[tuple[int, object]] = []
    filled = update = 0
    kind = next((layer.wg_comm.kind for layer in layers if layer.wg_comm.active), "all-reduce")
    for i in reversed(range(len(layers))):
        layer = layers[i]
        yield run.compute(i, "wg", layer.wg_compute)
        if layer.wg_comm.active:
            filled += layer.wg_comm.nbytes
            update += layer.update_time
        if filled and (filled >= bucket_size or i == 0):
            buckets.append((i, run.issue(i, "wg", Comm(kind, filled), update_ns=update)))
            filled = update = 0
        if i > 0:
            yield run.compute(i, "ig", layer.ig_compute)
    for i, event in buckets:
        yield from run.wait(i, "wg", event)
