"""Remote memory for MEM_LOAD / MEM_STORE nodes: ASTRA-sim's analytical remote-memory model.

Read from ASTRA-sim's remote-memory JSON (`--memory FILE`). An access of n bytes takes
`remote-mem-latency + n / remote-mem-bw` (ns; bandwidth in GB/s = bytes/ns). `memory-type` says
what is shared:

- PER_NPU_MEMORY_EXPANSION: each NPU has its own; accesses never wait for each other;
- PER_NODE_MEMORY_EXPANSION: one per node of `num-npus-per-node` NPUs, serving one access at a
  time, first come first served;
- MEMORY_POOL: one for all NPUs, one access at a time;
- NO_MEMORY_EXPANSION: no remote memory; a trace with memory nodes is an error (as in ASTRA-sim).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import simpy

from netsim.config import as_int, build, choice, read_json_object, setting
from netsim.errors import ConfigError
from netsim.units import parse_bandwidth, parse_time

MEMORY_TYPES = ("NO_MEMORY_EXPANSION", "PER_NPU_MEMORY_EXPANSION", "PER_NODE_MEMORY_EXPANSION", "MEMORY_POOL")


@dataclass(frozen=True)
class MemoryConfig:
    """ASTRA-sim's remote-memory settings, under its key names."""

    memory_type: str = setting(key="memory-type", parse=choice(*MEMORY_TYPES), help="what the remote memory is")
    latency: float = setting(0.0, key="remote-mem-latency", parse=parse_time, help="fixed time per access (ns)")
    bandwidth: float = setting(0.0, key="remote-mem-bw", parse=parse_bandwidth,
                               help="bytes per ns of an access (GB/s)")
    num_nodes: int = setting(0, key="num-nodes", parse=lambda v: as_int(v, 0), help="nodes (per-node expansion)")
    npus_per_node: int = setting(0, key="num-npus-per-node", parse=lambda v: as_int(v, 0),
                                 help="NPUs sharing one node's memory (per-node expansion)")
    path: str = ""  # the file it was read from, for messages


def load_memory(path: str | Path) -> MemoryConfig:
    """An ASTRA-sim remote-memory JSON file, checked."""
    table, source = read_json_object(Path(path))
    config = build(MemoryConfig, table, source)
    if config.memory_type != "NO_MEMORY_EXPANSION" and "remote-mem-bw" not in table:
        raise source.error("remote-mem-bw", "missing; expected the remote memory's bandwidth (GB/s)")
    if config.memory_type == "PER_NODE_MEMORY_EXPANSION" and config.npus_per_node < 1:
        raise source.error("num-npus-per-node", "PER_NODE_MEMORY_EXPANSION needs num-npus-per-node >= 1")
    return MemoryConfig(**{**config.__dict__, "path": str(path)})


class RemoteMemory:
    """Serves memory accesses: one FIFO server per shared memory, or none for per-NPU memory."""

    def __init__(self, env: simpy.Environment, config: MemoryConfig):
        self.env = env
        self.config = config
        self._free_at: dict[int, float] = {}  # shared memory -> time its current access ends

    def _shared_memory(self, npu: int) -> int | None:
        if self.config.memory_type == "PER_NODE_MEMORY_EXPANSION":
            return npu // self.config.npus_per_node
        if self.config.memory_type == "MEMORY_POOL":
            return 0
        return None

    def access(self, npu: int, nbytes: int) -> simpy.Event:
        """Load or store `nbytes` for `npu`; the event fires when the access is done."""
        runtime = self.config.latency + nbytes / self.config.bandwidth
        memory = self._shared_memory(npu)
        if memory is None:
            return self.env.timeout(runtime)
        end = max(self.env.now, self._free_at.get(memory, 0.0)) + runtime
        self._free_at[memory] = end
        return self.env.timeout(end - self.env.now)


def check_memory(trace, config: MemoryConfig | None) -> None:
    """A trace with memory nodes needs a remote memory to serve them (a one-line error names the first)."""
    if config is not None and config.memory_type == "PER_NODE_MEMORY_EXPANSION":
        if config.num_nodes * config.npus_per_node < len(trace.npus):
            raise ConfigError(f"{config.path}: num-nodes {config.num_nodes} x num-npus-per-node "
                              f"{config.npus_per_node} covers fewer than the trace's {len(trace.npus)} NPUs")
    for npu in trace.npus:
        for node in npu.nodes:
            if node.kind in ("MEM_LOAD", "MEM_STORE") and (config is None or config.memory_type == MEMORY_TYPES[0]):
                have = "no --memory FILE was given" if config is None else f"{config.path} says {MEMORY_TYPES[0]}"
                raise ConfigError(f"{npu.where(node)}: {node.kind} needs a remote memory, but {have} "
                                  f"(ASTRA-sim's remote-memory JSON, e.g. memory-type PER_NPU_MEMORY_EXPANSION)")
