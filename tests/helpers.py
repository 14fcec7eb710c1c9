"""Helpers for the tests: build networks and systems from bundled configs with overrides."""

from __future__ import annotations

import math
import sys
from pathlib import Path

from netsim.analytical import AnalyticalNetwork
from netsim.config import Source
from netsim.garnet.network import GarnetNetwork
from netsim.network_config import load_network, parse_network_table
from system import build_systems, load_system
from workload.chakra.schema import NODE_TYPES, AttributeProto, BoolList, GlobalMetadata, Node
from workload.chakra.stream import write_trace_file

ASTRA_SIM_INPUTS = Path(__file__).resolve().parent / "data" / "astra-sim-inputs"  # ASTRA-sim's own samples


def analytical(network: str, **topology_overrides) -> AnalyticalNetwork:
    overrides = [(["topology", key], value) for key, value in topology_overrides.items()]
    return AnalyticalNetwork(load_network(network, overrides).build_topology())


def systems_for(network, **system_overrides):
    overrides = [([key.replace("_", "-")], value) for key, value in system_overrides.items()]
    return build_systems(network, load_system("default", overrides))


def netsim_command() -> list[str]:
    """The `netsim` command as a user runs it: the script installed beside this Python (not another
    install that PATH may find first), else the CLI module."""
    script = Path(sys.executable).parent / "netsim"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "netsim.app.cli"]


def network_config(topology: dict, **garnet):
    """A packet-backend network config from Python tables (what a TOML file would hold)."""
    return parse_network_table({"topology": topology, "backend": "garnet", "garnet": garnet}, Source("test"), "test")


def garnet(config, **options) -> GarnetNetwork:
    """The packet backend of a network config (options: GarnetNetwork's test switches)."""
    return GarnetNetwork(config.build_topology(), config=config, **options)


def one_message(net, src: int, dst: int, nbytes: int) -> float:
    """Send one message on an idle network; the ns at which its recv fires."""
    arrived = []
    net.endpoint(src).send(dst, nbytes, "m")
    net.endpoint(dst).recv(src, nbytes, "m").callbacks.append(lambda _e: arrived.append(net.env.now))
    net.run()
    assert len(arrived) == 1
    return arrived[0]


def closed_form_cycles(config, src: int, dst: int, nflits: int) -> int:
    """Zero-load cycles of one packet by the closed form documented in netsim/garnet/network.py,
    from the config's own numbers (link latency and bandwidth, switch latency, router latency,
    clock; flit size as set, else the widest link's bytes per cycle), not from the parameters the
    backend derives: a wrong derivation there fails the tests that compare with this."""
    g = config.garnet
    topology = config.build_topology()
    # whole cycles, float noise forgiven: its own rounding, not netsim.units', so the oracle stays independent
    up = lambda x: math.ceil(x - 1e-9)  # noqa: E731
    flit_bytes = g.flit_bytes or math.floor(max(link.bandwidth for link in topology.links) / g.clock_ghz + 1e-9)
    path = topology.route(src, dst)
    cycles = 2  # the NIC's injection and ejection links
    cpfs = [1]
    for node in path:
        cycles += g.router_latency + up(topology.switch_latency.get(node, 0.0) * g.clock_ghz)
    for u, v in zip(path, path[1:]):
        link = topology.link(u, v)
        cpf = max(1, up(flit_bytes * g.clock_ghz / link.bandwidth))
        cycles += max(1, up(link.latency * g.clock_ghz)) + cpf - 1
        cpfs.append(cpf)
    return cycles + (nflits - 1) * max(cpfs)


def chakra_node(node_id: int, kind: str, deps=(), ctrl=(), name: str = "", micros: int = 0, **attrs):
    """A Chakra Node message: `kind` is a NodeType without _NODE (COMP, COMM_COLL, ...); each attribute
    is given as (value field, value), e.g. comm_size=("int64_val", 1024)."""
    node = Node(id=node_id, name=name or f"{kind.lower()}{node_id}", type=NODE_TYPES.index(f"{kind}_NODE"),
                data_deps=deps, ctrl_deps=ctrl, duration_micros=micros)
    for attr, (field, value) in attrs.items():
        if field == "bool_list":
            value = BoolList(values=value)
        node.attr.append(AttributeProto(name=attr, **{field: value}))
    return node


def write_traces(folder: Path, per_npu: list, name: str = "trace") -> Path:
    """Write one NAME.<rank>.et per entry of `per_npu` (a list of nodes); returns the prefix folder/NAME."""
    folder.mkdir(parents=True, exist_ok=True)
    for npu, nodes in enumerate(per_npu):
        write_trace_file(folder / f"{name}.{npu}.et", GlobalMetadata(version="0.0.4"), nodes)
    return folder / name
