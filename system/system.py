"""`System`: one NPU's system layer. It turns a collective call into chunks that walk phases,
each phase queued per dimension and run by the dimension's algorithm over the NetworkAPI."""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import simpy

from netsim.api import NetworkAPI
from netsim.topology import Topology
from system.algorithms import ALGORITHMS, PhaseContext
from system.collectives import plan_phases, split_chunks
from system.config import SystemConfig, check_algorithms
from system.records import CollectiveRecord, PhaseRecord
from system.scheduler import DimensionQueues


class System:
    """Collectives for one NPU; every NPU of a group must issue the same collectives in the same order."""

    def __init__(self, endpoint: NetworkAPI, topology: Topology, config: SystemConfig):
        self.endpoint = endpoint
        self.npu = endpoint.npu
        self.env: simpy.Environment = endpoint.env
        self.topology = topology
        self.config = config
        self.sizes = topology.dim_sizes
        self.queues = DimensionQueues(self.env, len(self.sizes), config.active_chunks_per_dimension,
                                      config.scheduling_policy)
        self.reduce_ns_per_byte = 3.0 / config.local_mem_bw if config.local_mem_bw else 0.0
        self.records: list[CollectiveRecord] = []
        self._issued = 0  # collectives issued by this NPU: their order sets queue priority
        self._communicator_seq: dict[tuple, int] = defaultdict(int)

    # ------------------------------------------------------------------ public collectives
    def all_reduce(self, nbytes: int, dims: Sequence[int] | None = None) -> simpy.Process:
        """Every NPU of the communicator ends with the element-wise sum of all NPUs' `nbytes`."""
        return self.collective("all-reduce", nbytes, dims)

    def reduce_scatter(self, nbytes: int, dims: Sequence[int] | None = None) -> simpy.Process:
        """Each NPU ends with its 1/p share of the sum of all NPUs' `nbytes`."""
        return self.collective("reduce-scatter", nbytes, dims)

    def all_gather(self, nbytes: int, dims: Sequence[int] | None = None) -> simpy.Process:
        """Each NPU contributes a shard of `nbytes` and ends with all p shards."""
        return self.collective("all-gather", nbytes, dims)

    def collective(self, kind: str, nbytes: int, dims: Sequence[int] | None = None) -> simpy.Process:
        """Start a collective over `dims` (default: every dimension); the event's value is its record."""
        dims = tuple(range(len(self.sizes))) if dims is None else tuple(dims)
        record = CollectiveRecord(kind, nbytes, self.npu, dims, issued_at=self.env.now)
        self.records.append(record)
        self._issued += 1
        seq = self._communicator_seq[dims]
        self._communicator_seq[dims] += 1
        return self.env.process(self._run(kind, nbytes, dims, record, self._issued, (dims, seq)))

    # ------------------------------------------------------------------ execution
    def _algorithm(self, kind: str, dim: int) -> str:
        names = self.config.algorithms(kind)
        return names[0] if len(names) == 1 else names[dim]

    def _run(self, kind, nbytes, dims, record, priority, communicator):
        chunk_sizes = split_chunks(nbytes, self.config.preferred_dataset_splits) if nbytes > 0 else []
        chunks = []
        for index, size in enumerate(chunk_sizes):
            phases: list[PhaseRecord] = []
            record.chunks.append(phases)
            plan = plan_phases(kind, size, dims, self.sizes, self.config.collective_optimization)
            chunks.append(self.env.process(self._chunk(kind, plan, phases, priority, (communicator, index))))
        if chunks:
            yield self.env.all_of(chunks)
        record.finished_at = self.env.now
        return record

    def _chunk(self, kind, plan, phases, priority, chunk_tag):
        for index, phase in enumerate(plan):
            algorithm = self._algorithm(kind, phase.dim)
            phase_record = PhaseRecord(phase.dim, phase.op, algorithm, phase.nbytes, queued_at=self.env.now)
            phases.append(phase_record)
            request = self.queues.request(phase.dim, priority)
            yield request
            phase_record.started_at = self.env.now
            group = tuple(self.topology.peers(self.npu, phase.dim))
            ctx = PhaseContext(self.endpoint, group, group.index(self.npu), phase.op, phase.nbytes,
                               (chunk_tag, index), self.config.endpoint_delay, self.reduce_ns_per_byte)
            yield from ALGORITHMS[algorithm](ctx)
            self.queues.release(phase.dim, request)
            phase_record.finished_at = self.env.now


def build_systems(network, config: SystemConfig) -> list[System]:
    """One System per NPU of `network`, after checking the config fits the topology."""
    topology = network.topology
    check_algorithms(config, len(topology.dims), set(ALGORITHMS), f"system config '{config.name}'")
    return [System(network.endpoint(npu), topology, config) for npu in range(topology.npus)]
