"""Pipeline parallelism: GPipe, 1F1B and interleaved 1F1B, with data parallelism across replicas.

Header options (legacy `PIPELINE_1F1B stages: 4 micro_batches: 8 ...` or the TOML form):
`stages` p, `micro_batches` m, `chunks` v (interleaved only, model chunks per device) and
`activation_bytes` (per micro-batch, sent forward as activations and backward as gradients) and
`tensor_parallel` t (default 1).
Layer compute times are per micro-batch. The layers are cut into p*v contiguous virtual stages;
virtual stage j runs on device j mod p (Megatron's interleaving; v = 1 is the plain pipeline).

NPU layout: with N NPUs there are d = N/p pipeline replicas; NPU n is device n // d of replica
n % d, so each device's d replicas are consecutive NPUs, and the weight-gradient all-reduces of a
device's layers run over them (dimension subsets when they align with the topology, explicit NPU
groups otherwise), issued after the device's last backward of that chunk and waited for at the end.
With tensor parallelism t, each t consecutive NPUs of a device form a tensor-parallel group: a
layer's forward and input-gradient collectives run over it, each blocking right after the layer's
compute (Megatron's all-reduces), and the data-parallel group is the device's NPUs in the same place
of every tensor-parallel group. Every NPU of a stage sends its micro-batch's whole activation to the
same replica of the next stage.

Activations and gradients are point-to-point sends through the NetworkAPI; a stage blocks on
receiving its input (counted as exposed communication: fwd for activations, ig for gradients).
With free communication each device is idle (p-1)(t_f+t_b)/v per iteration: the bubble
fraction idle/compute is (p-1)/m for GPipe and 1F1B and (p-1)/(v*m) for interleaved.
"""

from __future__ import annotations

from typing import Generator

from netsim.errors import ConfigError
from system.lockstep import Role
from workload.communicators import split_model_data, split_within
from workload.loops.core import NpuRun, register_loop


def _op(kind: str, micro_batch: int, chunk: int) -> tuple:
    return (kind, micro_batch, chunk)


def gpipe_schedule(p: int, m: int, device: int, v: int = 1) -> list[tuple]:
    """All forwards, then all backwards."""
    return [_op("F", k, 0) for k in range(m)] + [_op("B", k, 0) for k in range(m)]


def one_f_one_b_schedule(p: int, m: int, device: int, v: int = 1) -> list[tuple]:
    """PipeDream-flush: p - device - 1 warm-up forwards, then alternate one forward, one backward."""
    warmup = min(p - device - 1, m)
    ops = [_op("F", k, 0) for k in range(warmup)]
    for k in range(m - warmup):
        ops += [_op("F", warmup + k, 0), _op("B", k, 0)]
    return ops + [_op("B", k, 0) for k in range(m - warmup, m)]


def interleaved_schedule(p: int, m: int, device: int, v: int = 1) -> list[tuple]:
    """Megatron-LM's interleaved 1F1B: micro-batches in groups of p cycle through the v chunks."""
    total = m * v

    def op(kind: str, k: int) -> tuple:
        chunk = (k // p) % v
        return _op(kind, (k // (p * v)) * p + k % p, chunk if kind == "F" else v - 1 - chunk)

    warmup = min((p - device - 1) * 2 + (v - 1) * p, total)
    ops = [op("F", k) for k in range(warmup)]
    for k in range(total - warmup):
        ops += [op("F", warmup + k), op("B", k)]
    return ops + [op("B", k) for k in range(total - warmup, total)]


SCHEDULES = {"PIPELINE_GPIPE": gpipe_schedule, "PIPELINE_1F1B": one_f_one_b_schedule,
             "PIPELINE_INTERLEAVED": interleaved_schedule}


def _settings(run: NpuRun) -> tuple[int, int, int, int]:
    """(p, m, v, activation bytes) from the header, checked against the workload and the NPUs."""
    where = f"{run.workload.path or run.workload.name}:1"

    def one(key: str, default: int | None) -> int:
        values = run.option(key, None if default is None else [default])
        if values is None or len(values) != 1 or values[0] < (0 if key == "activation_bytes" else 1):
            raise ConfigError(f"{where}: header: {run.workload.parallelism} needs '{key}: N' (one integer"
                              f"{' >= 0' if key == 'activation_bytes' else ' >= 1'})")
        return values[0]

    interleaved = run.workload.parallelism == "PIPELINE_INTERLEAVED"
    p, m = one("stages", None), one("micro_batches", None)
    v = one("chunks", 2) if interleaved else 1
    if run.system.topology.npus % p:
        raise ConfigError(f"{where}: header: stages: {p} must divide the {run.system.topology.npus} NPUs")
    if len(run.workload.layers) < p * v:
        raise ConfigError(f"{where}: {len(run.workload.layers)} layers cannot fill {p * v} (virtual) stages")
    if interleaved and m % p:
        raise ConfigError(f"{where}: header: interleaved 1F1B needs micro_batches ({m}) divisible by stages ({p})")
    return p, m, v, one("activation_bytes", 0)


def virtual_stages(layer_count: int, count: int) -> list[range]:
    """Contiguous, near-equal layer ranges, one per virtual stage."""
    base, extra = divmod(layer_count, count)
    bounds = [0]
    for j in range(count):
        bounds.append(bounds[-1] + base + (1 if j < extra else 0))
    return [range(bounds[j], bounds[j + 1]) for j in range(count)]


def pipeline_role(run: NpuRun) -> Role:
    """Stage by stage: the device's tensor- and data-parallel groups, and the same replica on the devices
    before and after (around the ring of devices when interleaved)."""
    p, _m, v, _activation = _settings(run)
    replicas = run.system.topology.npus // p
    device, replica = divmod(run.npu, replicas)
    tensor, data = _device_groups(run, replicas)
    collectives = []
    for comm, phase in ((tensor, "fwd"), (tensor, "ig"), (data, "wg")):
        kinds = tuple(sorted({getattr(layer, f"{phase}_comm").kind for layer in run.workload.layers
                              if getattr(layer, f"{phase}_comm").active}))
        if comm is not None and kinds:
            collectives.append((comm.on(run.system), kinds))
    peers = tuple(((device + step) % p) * replicas + replica if v > 1 or 0 <= device + step < p else None
                  for step in (-1, 1)) if p > 1 else ()
    if p == 1 and v > 1:  # its chunks pass activations to itself: no class of one program (runs per message)
        return Role(run.npu, tuple(collectives), peers)
    return Role(device, tuple(collectives), peers)


def _device_groups(run: NpuRun, replicas: int) -> tuple:
    """(tensor-parallel group or None, data-parallel group or None) of this NPU within its device's
    `replicas` NPUs: without `tensor_parallel`, the data-parallel group is all of them; with t, each t
    consecutive NPUs form a tensor-parallel group and the NPUs in the same place of every such group the
    data-parallel group (workload.communicators.split_within)."""
    where = f"{run.workload.path or run.workload.name}:1"
    tensor = run.option("tensor_parallel", [1])
    if len(tensor) != 1 or tensor[0] < 1 or replicas % tensor[0]:
        raise ConfigError(f"{where}: header: tensor_parallel: {' '.join(map(str, tensor))} must be one integer "
                          f"dividing the {replicas} NPUs of a stage")
    block = split_model_data(run.system.topology, run.npu, replicas, where)[0]
    if tensor[0] == 1:
        return None, block if replicas > 1 else None
    model, data = split_within(block.on(run.system), run.npu, tensor[0], where)
    return model, data if replicas > tensor[0] else None


def pipeline_loop(run: NpuRun) -> Generator:
    """Run the schedule's ops on this device; see the module docstring."""
    p, m, v, activation = _settings(run)
    npus = run.system.topology.npus
    replicas = npus // p
    device, replica = divmod(run.npu, replicas)
    stages = virtual_stages(len(run.workload.layers), p * v)
    tensor, data = _device_groups(run, replicas)
    schedule = SCHEDULES[run.workload.parallelism](p, m, device, v)
    last_backward = {chunk: max(k for k, op in enumerate(schedule) if op[0] == "B" and op[2] == chunk)
                     for chunk in range(v)}
    endpoint = run.endpoint
    nbytes = max(1, activation)
    layers = run.workload.layers
    pending = []

    def npu_of(virtual: int) -> int:
        return (virtual % p) * replicas + replica

    for _ in range(run.passes):
        for k, (kind, micro_batch, chunk) in enumerate(schedule):
            j = chunk * p + device
            stage = stages[j]
            if kind == "F":
                if j > 0:
                    yield from run.wait(stage[0], "fwd", endpoint.recv(npu_of(j - 1), nbytes, ("act", micro_batch, j)))
                for i in stage:
                    yield run.compute(i, "fwd", layers[i].fwd_compute)
                    if tensor is not None:
                        yield from run.wait(i, "fwd", tensor.issue(run, i, "fwd", layers[i].fwd_comm))
                if j < p * v - 1:
                    endpoint.post(npu_of(j + 1), nbytes, ("act", micro_batch, j + 1))
                continue
            if j < p * v - 1:
                yield from run.wait(stage[-1], "ig", endpoint.recv(npu_of(j + 1), nbytes, ("grad", micro_batch, j)))
            for i in reversed(stage):
                yield run.compute(i, "wg", layers[i].wg_compute)
                if i > 0:
                    yield run.compute(i, "ig", layers[i].ig_compute)
                    if tensor is not None:
                        yield from run.wait(i, "ig", tensor.issue(run, i, "ig", layers[i].ig_comm))
            if j > 0:
                endpoint.post(npu_of(j - 1), nbytes, ("grad", micro_batch, j - 1))
            if k == last_backward[chunk] and data is not None:
                pending += [(i, data.issue(run, i, "wg", layers[i].wg_comm)) for i in stage]
        for i, event in pending:
            yield from run.wait(i, "wg", event)
        pending = []


for _name in SCHEDULES:
    register_loop(_name, role=pipeline_role)(pipeline_loop)
