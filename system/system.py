"""`System`: one NPU's system layer. It turns a collective call into chunks that walk phases,
each phase queued on its group's queue and run by the dimension's algorithm over the NetworkAPI."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Sequence

import simpy

from netsim.api import NetworkAPI
from netsim.errors import ConfigError
from netsim.topology import Topology
from system.algorithms import ROOTED_ALGORITHM, PhaseContext, resolve
from system.algorithms.context import LocalReduction
from system.collectives import (COLLECTIVES, DIMENSIONAL, Communicator, Phase, all_gather_order, plan_phases,
                                astra_chunks, split_chunks)
from system.config import SystemConfig, by_dimension, check_algorithms
from system.records import CollectiveRecord, PhaseRecord
from system.scheduler import Scheduler, dimension_order
from system.symmetric import MirrorEndpoint, SymmetricCollectives


class System:
    """Collectives for one NPU; every member of a communicator must issue its collectives in the same order.

    All Systems of one simulation share one `Scheduler` (build_systems makes them so): a phase
    starts once every member of its group has queued it.
    """

    def __init__(self, endpoint: NetworkAPI, topology: Topology, config: SystemConfig, scheduler: Scheduler):
        self.endpoint = endpoint
        self.npu = endpoint.npu
        self.env: simpy.Environment = endpoint.env
        self.topology = topology
        self.config = config
        self.sizes = topology.dim_sizes
        self.scheduler = scheduler
        self.astra_accounting = config.collective_accounting == "astra-sim"
        self.reduction = LocalReduction(3.0 / config.local_mem_bw if config.local_mem_bw else 0.0,
                                        serial=not self.astra_accounting)
        self._over_dims: dict[tuple, Communicator] = {}  # communicators over topology dimensions, built once
        self._trees: dict = defaultdict(int)  # per dimension: double-binary-tree phases planned (trees alternate)
        self.records: list[CollectiveRecord] = []
        self.functional = None  # a system.functional.Functional while verifying payloads
        self._seq: dict[int, int] = defaultdict(int)  # collectives issued per communicator id
        self._load: dict[int, dict] = defaultdict(dict)  # per communicator: bytes planned per dim (themis)

    # ------------------------------------------------------------------ public collectives
    def all_reduce(self, nbytes: int, dims: Sequence[int] | None = None, **options) -> simpy.Process:
        """Every NPU of the communicator ends with the element-wise sum of all NPUs' `nbytes`."""
        return self.collective("all-reduce", nbytes, dims, **options)

    def reduce_scatter(self, nbytes: int, dims: Sequence[int] | None = None, **options) -> simpy.Process:
        """Each NPU ends with its 1/p share of the sum of all NPUs' `nbytes`."""
        return self.collective("reduce-scatter", nbytes, dims, **options)

    def all_gather(self, nbytes: int, dims: Sequence[int] | None = None, **options) -> simpy.Process:
        """Each NPU contributes a shard of `nbytes` and ends with all p shards in rank order."""
        return self.collective("all-gather", nbytes, dims, **options)

    def all_to_all(self, nbytes: int, dims: Sequence[int] | None = None, **options) -> simpy.Process:
        """Each NPU sends block j of its `nbytes` to rank j and ends with block i of every rank i."""
        return self.collective("all-to-all", nbytes, dims, **options)

    def broadcast(self, nbytes: int, dims: Sequence[int] | None = None, **options) -> simpy.Process:
        """Rank 0's `nbytes` reach every NPU."""
        return self.collective("broadcast", nbytes, dims, **options)

    def reduce(self, nbytes: int, dims: Sequence[int] | None = None, **options) -> simpy.Process:
        """Rank 0 ends with the sum of all NPUs' `nbytes`."""
        return self.collective("reduce", nbytes, dims, **options)

    def gather(self, nbytes: int, dims: Sequence[int] | None = None, **options) -> simpy.Process:
        """Rank 0 ends with every NPU's shard of `nbytes`, in rank order."""
        return self.collective("gather", nbytes, dims, **options)

    def scatter(self, nbytes: int, dims: Sequence[int] | None = None, **options) -> simpy.Process:
        """Rank i ends with part i of rank 0's `nbytes`."""
        return self.collective("scatter", nbytes, dims, **options)

    def barrier(self, dims: Sequence[int] | None = None, **options) -> simpy.Process:
        """Finishes on an NPU only once every NPU of the communicator has entered it."""
        return self.collective("barrier", 0, dims, **options)

    def collective(self, kind: str, nbytes: int, dims: Sequence[int] | None = None, *,
                   group: Sequence[int] | None = None, shape: Sequence[int] | None = None,
                   algorithm_dims: Sequence[int] | None = None, priority: float | None = None) -> simpy.Process:
        """Start `kind` over `dims` (default: every dimension) or over the explicit NPU `group` (rank order).

        A `group` with a `shape` (sizes of its axes, axis 0 fastest in rank order) runs phase by axis,
        each axis with the algorithm of topology dimension `algorithm_dims[axis]`; without, one flat
        phase. nbytes is the per-NPU input (all-gather and gather: each NPU's shard). `priority`:
        lower runs first in every queue, whatever the scheduling policy. The event's value is the record.
        """
        if kind not in COLLECTIVES:
            raise ConfigError(f"unknown collective '{kind}' (one of {', '.join(COLLECTIVES)})")
        comm = self.communicator(dims, group, shape, algorithm_dims)
        comm_id = self.scheduler.communicator_id(comm.members)
        seq = self._seq[comm_id]
        self._seq[comm_id] += 1
        record = CollectiveRecord(kind, nbytes, self.npu, comm.dims, issued_at=self.env.now)
        self.records.append(record)
        chunk_sizes, plans, record.planned_bytes = self._planned(kind, nbytes, comm, comm_id)
        plans = [[(phase, name, self._variant(name, phase, comm)) for phase, name in plan] for plan in plans]
        payload = self.functional.collective(self, kind, nbytes, comm, len(chunk_sizes)) if self.functional else None
        issue = (self.env.now, seq)
        signature = (kind, nbytes, self.env.now, priority, tuple(map(tuple, plans)))
        self.scheduler.symmetric.issued(self.npu, (comm_id, seq), signature, self._network_started())
        return self.env.process(self._run(record, plans, comm, (comm_id, seq), issue, priority, payload))

    def _planned(self, kind: str, nbytes: int, comm: Communicator, comm_id: int) -> tuple[list[int], list, float]:
        """`_plans` and this NPU's wire share (`_cached_plan`), updating the communicator's load."""
        load = self._load[comm_id]
        planned = self._cached_plan(kind, nbytes, comm, load)
        load.update(planned[3])
        return planned[:3]

    def _cached_plan(self, kind: str, nbytes: int, comm: Communicator, load: dict) -> tuple:
        """(chunk sizes, plans, wire share, the communicator's load after), computed once for all members
        that plan the same collective over the same shape of communicator with the same load
        (Scheduler.plans; 4096 NPUs planned the same phases 4096 times); `load` is left as it is."""
        key = (kind, nbytes, comm.dims, comm.sizes, comm.algorithm_dims, comm.shaped, len(comm.members),
               tuple(sorted(load.items())))
        planned = self.scheduler.plans.get(key)
        if planned is None:
            after = dict(load)
            chunk_sizes, plans = self._plans(kind, nbytes, comm, after)
            planned = self.scheduler.plans[key] = (chunk_sizes, plans, self._wire_share(plans, comm), after)
        return planned

    def _network_started(self) -> bool:
        """Whether the simulation runs already (a symmetric collective must be issued before it does)."""
        network = getattr(self.endpoint, "network", None)
        return network is None or network.started

    def phase_plans(self, kind: str, nbytes: int, comm: Communicator) -> list:
        """Per chunk, the [(phase, algorithm name)] `collective(kind, nbytes)` over `comm` would run, were it the
        communicator's first (nothing is issued or changed)."""
        return self._cached_plan(kind, nbytes, comm, {})[1]

    def planned_bytes(self, kind: str, nbytes: int, dims: Sequence[int] | None = None, *,
                      group: Sequence[int] | None = None) -> float:
        """This NPU's share of the bytes `collective(kind, nbytes, dims, group=group)` would put on the
        network, were it issued now (nothing is issued or changed)."""
        if kind not in COLLECTIVES:
            raise ConfigError(f"unknown collective '{kind}' (one of {', '.join(COLLECTIVES)})")
        comm = self.communicator(dims, group)
        return self._cached_plan(kind, nbytes, comm, {})[2]  # themis: as the first issued

    # ------------------------------------------------------------------ planning
    def communicator(self, dims: Sequence[int] | None, group: Sequence[int] | None = None,
                     shape: Sequence[int] | None = None, algorithm_dims: Sequence[int] | None = None) -> Communicator:
        """The communicator `collective` runs over with these arguments (a one-line ConfigError if invalid)."""
        if group is not None:
            if self.npu not in group or len(set(group)) != len(group):
                raise ConfigError(f"NPU {self.npu}: collective group {tuple(group)} must list distinct NPUs "
                                  f"including this one")
            if shape is not None and math.prod(shape) != len(group):
                raise ConfigError(f"NPU {self.npu}: collective group of {len(group)} NPUs cannot have the shape "
                                  f"{tuple(shape)}")
            return Communicator.of_group(group, shape, algorithm_dims)
        dims = tuple(range(len(self.sizes)) if dims is None else dims)
        comm = self._over_dims.get(dims)
        if comm is None:
            comm = self._over_dims[dims] = self.scheduler.over_dims(self.topology, self.npu, dims)
        return comm

    def _plans(self, kind: str, nbytes: int, comm: Communicator, load: dict) -> tuple[list[int], list]:
        """(chunk sizes, per chunk its [(phase, algorithm name)]); `load` (the communicator's bytes
        planned per dimension, for themis) is updated with these chunks."""
        if kind == "barrier":
            chunk_sizes = [0]  # one data-less chunk
        else:
            chunk_sizes = self._chunks(kind, nbytes) if nbytes > 0 else []
        flat, baseline, whole = self._shape(kind, comm)
        optimization = "baseline" if baseline else self.config.collective_optimization
        dims = all_gather_order(comm.dims) if kind == "all-gather" else comm.dims
        bandwidth = {d: self.topology.dims[comm.algorithm_dim(d)].bandwidth for d in comm.dims}
        plans = []
        for index, size in enumerate(chunk_sizes):
            order = dimension_order(self.config.inter_dimension_scheduling, dims, index, load, bandwidth)
            plan = plan_phases(kind, size, comm, flat, optimization, order, whole)
            plans.append([(phase, self._algorithm(kind, phase, comm)) for phase in plan])
            for phase in plan:
                if phase.dim is not None:
                    load[phase.dim] = load.get(phase.dim, 0) + phase.nbytes
        return chunk_sizes, plans

    def _wire_share(self, plans: list, comm: Communicator) -> float:
        """This NPU's share of the bytes the phases of `plans` send: each phase's group total (the
        algorithm's closed form) over the group's size, so the shares of all members add up to it."""
        total = 0.0
        for plan in plans:
            for phase, name in plan:
                size = len(comm.members) if phase.dim is None else comm.size(phase.dim)
                total += resolve(name)[0].wire_bytes(phase.op, phase.nbytes, size) / size
        return total

    def _chunks(self, kind: str, nbytes: int) -> list[int]:
        """The collective's chunk sizes: ASTRA-sim's (equal chunks of nbytes // splits, rounded up in
        number) under its accounting, else `preferred-dataset-splits` near-equal chunks."""
        splits = self.config.preferred_dataset_splits
        if self.astra_accounting:
            return astra_chunks(nbytes, splits, 1 if kind == "all-gather" else self.topology.npus)
        return split_chunks(nbytes, splits)

    def _names(self, kind: str, comm: Communicator) -> list[str]:
        names = self.config.algorithms(kind)
        return [names[0] if len(names) == 1 else names[d] for d in comm.algorithm_dims] or [names[0]]

    def _shape(self, kind: str, comm: Communicator) -> tuple[bool, bool, frozenset]:
        """(one flat phase?, all-reduce falls back to baseline?, dimensions that can only all-reduce).

        localBWAware all-reduce reduce-scatters on the leading dimensions. A dimension whose
        all-reduce algorithm never reduce-scatters (double-binary-tree) all-reduces the whole data
        in that place and again in the all-gather's, as ASTRA-sim does; under the physical
        accounting, and when an algorithm cannot reduce-scatter on its group size (halving-doubling
        on 6 NPUs), the collective runs a full all-reduce per dimension instead.
        """
        if kind not in DIMENSIONAL:
            return True, False, frozenset()
        algorithms = [resolve(name)[0] for name in self._names(kind, comm)]
        flat = not comm.dims or any(a.flat for a in algorithms)
        if kind != "all-reduce":
            return flat, False, frozenset()
        whole = frozenset(d for d, a in zip(comm.dims, algorithms)
                          if self.astra_accounting and "reduce-scatter" not in a.ops)
        baseline = any(not a.supports("reduce-scatter", size)
                       for d, a, size in zip(comm.dims, algorithms, comm.sizes) if d not in whole)
        return flat, baseline, whole

    def _algorithm(self, kind: str, phase: Phase, comm: Communicator) -> str:
        """The algorithm name for `phase`, after checking it can run there (a one-line ConfigError if not)."""
        if kind not in DIMENSIONAL:
            name = ROOTED_ALGORITHM[kind]
        else:
            names = self.config.algorithms(kind)
            name = names[0] if phase.dim is None or len(names) == 1 else names[comm.algorithm_dim(phase.dim)]
        size = len(comm.members) if phase.dim is None else comm.size(phase.dim)
        resolve(name)[0].check(name, phase.op, size)
        return name

    def _variant(self, name: str, phase: Phase, comm: Communicator) -> int:
        """The variant of an issued phase (double-binary-tree: this NPU's count of tree phases on the
        dimension so far, so consecutive ones alternate trees; others 0)."""
        if name != "double-binary-tree":
            return 0
        axis = (comm.shaped, phase.dim)  # a shaped group's axes have trees of their own
        variant = self._trees[axis]
        self._trees[axis] += 1
        return variant

    # ------------------------------------------------------------------ execution
    def _run(self, record, plans, comm, tag, issue, priority, payload):
        symmetric = self.scheduler.symmetric
        instance = symmetric.decide(tag, comm, self, plans)
        endpoint, scheduler = self.endpoint, self.scheduler
        if instance is not None:
            record.chunks = instance.chunks  # every member shows the representative's phases, also mid-run
            if instance.representative != self.npu:  # follow the representative's timeline
                yield instance.done
                symmetric.finished(self.npu)
                record.finished_at = self.env.now
                return record
            endpoint = MirrorEndpoint(self.endpoint, instance.relabelling, instance)
            scheduler = instance.scheduler
        chunks = []
        for index, plan in enumerate(plans):
            phases: list[PhaseRecord] = []
            record.chunks.append(phases)
            chunk_payload = payload.chunk(index) if payload is not None else None
            chunks.append(self.env.process(self._chunk(plan, phases, comm, (tag, index), index, issue, priority,
                                                       chunk_payload, endpoint, scheduler)))
        if chunks:
            yield self.env.all_of(chunks)
        if payload is not None:
            payload.finish()
        symmetric.finished(self.npu)
        record.finished_at = self.env.now
        if instance is not None:
            self.endpoint.network.flush_orbits()
            instance.done.succeed()
        return record

    def _chunk(self, plan, phases, comm, chunk_tag, index, issue, priority, payload, endpoint, scheduler):
        for step, (phase, name, variant) in enumerate(plan):
            phase_record = PhaseRecord(phase.dim, phase.op, name, phase.nbytes, queued_at=self.env.now)
            phases.append(phase_record)
            group = comm.members if phase.dim is None else comm.peers(self.topology, self.npu, phase.dim)
            queue = scheduler.queue(group, index)
            key = (chunk_tag, step)
            yield queue.request(self.env, self.npu, key,
                                scheduler.order(priority, issue, phase.nbytes, len(plan) - step))
            phase_record.started_at = self.env.now
            algorithm, window = resolve(name)
            rank = group.index(self.npu)
            data = payload.phase(phase, group, rank) if payload is not None else None
            ctx = PhaseContext(endpoint, group, rank, phase.op, phase.nbytes, key, self.config.endpoint_delay,
                               self.reduction, self.astra_accounting,
                               self.config.direct_collective_window if window is None else window, variant, data)
            yield from algorithm.run(ctx)
            if data is not None:
                data.finish()
            if self.config.phase_barrier == "all":  # ASTRA-sim v1: the chunk moves on once every NPU has finished
                yield scheduler.barrier(self.env, key, len(comm.members))
            queue.release(self.npu, key)
            phase_record.finished_at = self.env.now


def build_systems(network, config: SystemConfig, symmetric: bool = True) -> list[System]:
    """One System per NPU of `network` (sharing one scheduler), after checking the config fits the topology.
    `symmetric=False` runs every collective per message whatever `collective-simulation` says: for
    drivers whose NPUs issue further collectives while earlier ones run (Chakra traces)."""
    topology = network.topology
    config = by_dimension(config, tuple(dim.kind for dim in topology.dims))
    check_algorithms(config, topology.dim_sizes, f"system config '{config.name}'")
    scheduler = Scheduler(config, SymmetricCollectives(config, symmetric))
    return [System(network.endpoint(npu), topology, config, scheduler) for npu in range(topology.npus)]
