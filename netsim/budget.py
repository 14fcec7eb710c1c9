"""Up-front estimates of what a run will hold in memory and how much work it is, so a runaway input
gets a clear error (it cannot fit) or a warning (it will take long) before it eats the machine.

Memory, measured on this project's runs (`/usr/bin/time -f %M netsim collective all-reduce --size
1MiB`, scripts would re-measure them the same way):
- every NPU costs about BYTES_PER_NPU (its System, its links and routes, its records): 8 KB on
  a ring, 39 KB on a 3-D torus (512 vs 4096 NPUs and 4096 vs 16384); communicator member lists
  are shared by their members, so they add nothing per NPU (they once grew as NPUs^2);
- every chunk of a collective on every NPU is a simpy process with its records: about
  BYTES_PER_CHUNK (64 MiB split into 10^9 chunks on 16 NPUs: far past any machine).
The packet backend adds its own state (`netsim.garnet.plan.PacketPlan.state`, counted from the topology and the
[garnet] table before the network is built; tracemalloc of GarnetNetwork on torus-4x4 and torus-8x8
at 2 and 34 VCs, both giving the same figures):
- every router or NIC input port with its output unit upstream: BYTES_PER_PORT;
- every VC of those ports (its buffer queues, credits and allocation state): BYTES_PER_VC;
- every packet of the largest message: BYTES_PER_MESSAGE_PACKET, the latency-histogram entry it can
  add (packets of one message wait for each other, so each has a latency of its own; a dict entry
  of two ints, 106 B measured).
- a topology alone (`netsim topo`, and every command before its run is planned) costs about
  BYTES_PER_TOPOLOGY_NPU: 1.8 KB on a 100,000-NPU ring, 4.1 KB on a 100x100x10 torus (`/usr/bin/time
  -f %M netsim topo torus-4x4 --set topology.dims=[...]`, less the 88 MB of a 2-NPU one), checked
  from the spec's NPU count before the graph is built;
- an input file is read whole and parsed into Python objects: TEXT_BYTES_FACTOR times its size at
  most (tracemalloc's peak over the text's length, a list of numbers: JSON 4.6-6.5, TOML 6.5,
  YAML 146, PyYAML's node tree).
Work: the packet backend moves about FLIT_HOPS_PER_S[fidelity] flit-hops a second (pure Python;
flit fidelity: 104-108 k on the 8x8 NoC torus at uniform 0.3, scripts/bench_network.py, and 109 k
in a 1 MiB ring all-reduce on the 8x8 torus; packet fidelity: 1.39 M in a 16 MiB ring all-reduce
on a 16x16 torus); fast-forward can skip a steady state, so its estimate is an upper bound, said
as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from netsim.errors import ConfigError
from netsim.units import format_size

BYTES_PER_NPU = 40_000
BYTES_PER_CHUNK = 2600
BYTES_PER_PORT = 2700
BYTES_PER_VC = 1900
BYTES_PER_MESSAGE_PACKET = 110
BYTES_PER_TOPOLOGY_NPU = 4500
TEXT_BYTES_FACTOR = 150
FLIT_HOPS_PER_S = {"flit": 1e5, "packet": 1.2e6}  # by garnet.fidelity (see the module docstring)
WARN_AFTER_S = 600.0  # estimated work beyond this is worth a warning


@dataclass(frozen=True)
class Budget:
    """What one run is expected to hold and do, from its plan before anything is built."""

    npus: int
    chunks_per_npu: int  # chunks of those collectives in flight per NPU at most
    flit_hops: float = 0.0  # packet backend: flits times hops the run moves (0: not known)
    fidelity: str = "flit"  # packet backend: garnet.fidelity, which sets the rate it moves them at
    ports: int = 0  # packet backend: input ports of routers and NICs (0: not counted)
    vcs: int = 0  # packet backend: the VCs of those ports
    message_packets: int = 0  # packet backend: packets of the largest message

    topology_only: bool = False  # the topology's graph alone (netsim topo; a run's check before building)

    @property
    def memory_bytes(self) -> float:
        if self.topology_only:
            return self.npus * BYTES_PER_TOPOLOGY_NPU
        return (self.npus * (BYTES_PER_NPU + self.chunks_per_npu * BYTES_PER_CHUNK) + self.ports * BYTES_PER_PORT
                + self.vcs * BYTES_PER_VC + self.message_packets * BYTES_PER_MESSAGE_PACKET)

    def check_memory(self, what: str) -> None:
        """A ConfigError when the run cannot fit in the memory available."""
        available = available_memory()
        if available is None or self.memory_bytes <= available:
            return
        parts = [f"{self.npus:,} NPUs", "its graph" if self.topology_only else f"{self.chunks_per_npu:,} chunks each"]
        if self.ports:
            parts += [f"{self.ports:,} ports with {self.vcs:,} VCs",
                      f"{self.message_packets:,} packets in the largest message"]
        advice = "use fewer NPUs" + ("" if self.topology_only else " or chunks (preferred-dataset-splits)")
        if self.ports:
            advice += ", fewer VCs (garnet.vcs) or a smaller message"
        raise ConfigError(f"{what} would need about {format_size(self.memory_bytes)} of memory ({', '.join(parts)}), "
                          f"more than the {format_size(available)} available: {advice}")

    def check(self, what: str) -> list[str]:
        """A ConfigError when the run cannot fit in the memory available; else warnings (one line each)."""
        self.check_memory(what)
        rate = FLIT_HOPS_PER_S[self.fidelity]
        seconds = self.flit_hops / rate
        if seconds > WARN_AFTER_S:
            return [f"{what} moves about {self.flit_hops:.3g} flit-hops: up to {duration(seconds)} at the packet "
                    f"backend's ~{rate:.2g} flit-hops/s in {self.fidelity} fidelity (less where fast-forward "
                    f"skips a steady state); Ctrl-C stops it and writes what was simulated"]
        return []




def check_input_size(path: Path, size: int) -> None:
    """An input file of `size` bytes is read whole and parsed: refused in one line when that cannot fit
    in the memory available (/dev/zero, or a file of gigabytes given by mistake)."""
    available = available_memory()
    if available is not None and size * TEXT_BYTES_FACTOR > available:
        raise ConfigError(f"{path}: {format_size(size)} is too large to read as an input file (parsed, about "
                          f"{format_size(size * TEXT_BYTES_FACTOR)}, more than the {format_size(available)} "
                          f"of memory available)")


def duration(seconds: float) -> str:
    """Wall time in the unit a person reads it in: '12 min', '3.5 h', '40 days', '2.4e+03 years'."""
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def available_memory() -> int | None:
    """Bytes of memory available now (Linux /proc/meminfo), or None where that cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
