"""System layer: per-NPU collectives, their algorithms and the chunk scheduler.

Imports the network layer's API (`netsim.api`, `netsim.topology`), never the workload layer.
"""

from system.config import SystemConfig, load_system
from system.system import System, build_systems

__all__ = ["System", "SystemConfig", "build_systems", "load_system"]
