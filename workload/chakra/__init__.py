"""Chakra execution traces (ASTRA-sim 2.x's workload format): read, execute, and write from training loops.

schema (the protobuf messages) -> stream (the .et file layout) -> trace (checked per-NPU graphs)
-> execute (run on the system layer and NetworkAPI) -> report (nodes.csv, per-NPU totals);
record + write turn a legacy or TOML workload's training loop into traces.
"""

from workload.chakra.execute import ComputeModel, NpuExecution, start_trace
from workload.chakra.memory import MemoryConfig, RemoteMemory, check_memory, load_memory
from workload.chakra.trace import Trace, is_trace_spec, load_comm_groups, load_trace
from workload.chakra.write import write_chakra

__all__ = ["ComputeModel", "MemoryConfig", "NpuExecution", "RemoteMemory", "Trace", "check_memory", "is_trace_spec",
           "load_comm_groups", "load_memory", "load_trace", "start_trace", "write_chakra"]
