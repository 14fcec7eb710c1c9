"""Training loops, one module per family, all registered by name in `core.LOOPS` on import.

`NpuRun` is what a loop drives (compute, issue, wait, per-layer stats); `register_loop` adds a
loop under the keyword a workload starts with.
"""

from workload.loops import data, dlrm, hybrid, micro, model, pipeline  # noqa: F401  (registers the loops)
from workload.loops.core import LOOPS, PASSES, LayerStats, NpuRun, loop_for, register_loop

__all__ = ["LOOPS", "PASSES", "LayerStats", "NpuRun", "loop_for", "register_loop"]
