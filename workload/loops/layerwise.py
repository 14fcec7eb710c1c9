"""The layer-by-layer training passes of ASTRA-sim's DATA and MODEL loops (as ASTRA-sim v1 runs them).

Forward, layer by layer: wait for the layer's weight-gradient collective of the previous pass
(and its update time), compute, and - when activations are sharded (MODEL) - issue the forward
collective and block on it.

Backward, from the last layer:
- DATA: weight-gradient compute, issue its collective without blocking, then (not for the first
  layer, which has no input gradient to pass on) input-gradient compute.
- MODEL: input-gradient compute (every layer, the first too, as ASTRA-sim does), its collective
  issued without blocking (not for the first layer); weight-gradient compute, which the
  input-gradient collective overlaps; then block on the input-gradient collective, which the
  layer below needs.
Which collectives run, over which NPUs, is the parallelism's (workload.communicators): DATA has
only weight-gradient collectives, MODEL only forward and input-gradient ones. The run ends when
every weight-gradient collective is done.
"""

from __future__ import annotations

from typing import Generator

from system.lockstep import Role
from workload.communicators import PassComms, pass_comms, pass_role
from workload.loops.core import NpuRun


def forward_blocking(run: NpuRun, comms: PassComms, i: int) -> Generator:
    """Layer `i`'s forward: compute, then its forward collective, which the next layer must wait for."""
    layer = run.workload.layers[i]
    yield run.compute(i, "fwd", layer.fwd_compute)
    yield from run.wait(i, "fwd", comms.fwd.issue(run, i, "fwd", layer.fwd_comm))


def parallelism_comms(run: NpuRun) -> PassComms:
    """The communicators of the workload's own parallelism keyword."""
    return pass_comms(run.workload.parallelism, run.system.topology, run.npu, run.workload.options,
                      run.workload.path or run.workload.name)


def uniform_comms(run: NpuRun) -> list[PassComms]:
    """Every layer uses the communicators of the workload's own keyword."""
    return [parallelism_comms(run)] * len(run.workload.layers)


def parallelism_role(run: NpuRun) -> Role:
    """The Role of a loop whose layers use `uniform_comms`."""
    return pass_role(run, uniform_comms(run))


def layerwise_training(run: NpuRun, blocking_activations: bool) -> Generator:
    """`run.passes` passes as the module docstring describes: MODEL's with `blocking_activations`, else DATA's."""
    layers = run.workload.layers
    comms = parallelism_comms(run)
    pending = [None] * len(layers)
    for _ in range(run.passes):
        for i, layer in enumerate(layers):
            yield from run.wait(i, "wg", pending[i])
            if blocking_activations:
                yield from forward_blocking(run, comms, i)
            else:
                yield run.compute(i, "fwd", layer.fwd_compute)
        for i in reversed(range(len(layers))):
            layer = layers[i]
            if blocking_activations:
                yield run.compute(i, "ig", layer.ig_compute)
                ig = comms.ig.issue(run, i, "ig", layer.ig_comm) if i > 0 else None
                yield run.compute(i, "wg", layer.wg_compute)
                pending[i] = comms.wg.issue(run, i, "wg", layer.wg_comm)
                yield from run.wait(i, "ig", ig)
            else:
                yield run.compute(i, "wg", layer.wg_compute)
                pending[i] = comms.wg.issue(run, i, "wg", layer.wg_comm)
                if i > 0:
                    yield run.compute(i, "ig", layer.ig_compute)
    for i in range(len(layers)):
        yield from run.wait(i, "wg", pending[i])
