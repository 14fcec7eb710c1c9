"""ASTRA-sim's MICRO loop: a collective micro-benchmark."""

from __future__ import annotations

from typing import Generator

from workload.communicators import every_dimension_role
from workload.loops.core import NpuRun, register_loop


@register_loop("MICRO", role=every_dimension_role)
def micro_benchmark(run: NpuRun) -> Generator:
    """Every pass's weight-gradient collective of every layer is issued at once, then waited for: as
    in ASTRA-sim v1, the passes' collectives run concurrently, queued by the scheduling policy
    (compute fields are ignored). (v1 issues only the first layer's; every layer's here.)"""
    issued = [(i, run.issue(i, "wg", layer.wg_comm)) for _ in range(run.passes)
              for i, layer in enumerate(run.workload.layers)]
    for i, event in issued:
        yield from run.wait(i, "wg", event)
