"""ASTRA-sim's MICRO loop: a collective micro-benchmark."""

from __future__ import annotations

from typing import Generator

from workload.loops.core import NpuRun, register_loop


@register_loop("MICRO")
def micro_benchmark(run: NpuRun) -> Generator:
    """Each pass issues every layer's weight-gradient collective and blocks on it: the collectives
    run back to back with no compute between them (ASTRA-sim's MICRO; compute fields are ignored)."""
    for _ in range(run.passes):
        for i, layer in enumerate(run.workload.layers):
            yield from run.wait(i, "wg", run.issue(i, "wg", layer.wg_comm))
