"""Chakra traces read into checked per-NPU graphs: one `PREFIX.<rank>.et` file per NPU.

A node's meaning comes from its type and attributes, as ASTRA-sim 2.x reads them:

- COMP: `duration_micros` (replayed; 0 counts as 1 ns, as in ASTRA-sim), or netsim's more precise
  `duration_ns`; with the system's roofline on, `num_ops` and `tensor_size` (bytes) instead;
  `is_cpu_op` marks host work.
- COMM_COLL: `comm_type` (Chakra's CollectiveCommType), `comm_size` (bytes per NPU, as
  `netsim collective --size`), `involved_dim` (one bool per network dimension; absent: all) or
  `pg_name` (a communicator group), `comm_priority` (lower runs first).
- COMM_SEND / COMM_RECV: `comm_dst` / `comm_src` (the peer), `comm_size`, `comm_tag`.
- MEM_LOAD / MEM_STORE: `tensor_size` bytes to or from remote memory.
- METADATA / INVALID: nothing to do; they finish at once.

A node runs once every node in its `data_deps` and `ctrl_deps` has finished. Integer attributes
may use any of protobuf's integer kinds (ASTRA-sim converts between them). Errors name the file
and the node.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from netsim.config import read_json_object
from netsim.errors import ConfigError
from netsim.topology import Topology
from netsim.units import MAX_TIME_NS
from system.collectives import Communicator
from workload.chakra.schema import COLLECTIVE_COMM_TYPES, NODE_TYPES
from workload.chakra.stream import read_trace_file

# Chakra's CollectiveCommType -> netsim's collective (REDUCE_SCATTER_BLOCK is a reduce-scatter of equal blocks).
COLLECTIVE_KINDS = {"ALL_REDUCE": "all-reduce", "REDUCE": "reduce", "ALL_GATHER": "all-gather", "GATHER": "gather",
                    "SCATTER": "scatter", "BROADCAST": "broadcast", "ALL_TO_ALL": "all-to-all",
                    "REDUCE_SCATTER": "reduce-scatter", "REDUCE_SCATTER_BLOCK": "reduce-scatter",
                    "BARRIER": "barrier"}
INTEGER_VALUES = ("int32_val", "int64_val", "uint32_val", "uint64_val", "sint32_val", "sint64_val", "fixed32_val",
                  "fixed64_val", "sfixed32_val", "sfixed64_val")
TRACE_FILE = re.compile(r"^(?P<prefix>.+)\.(?P<rank>\d+)\.et$")


@dataclass(frozen=True)
class TraceNode:
    """One node of one NPU's graph, with the attributes its type uses (others are None)."""

    id: int
    name: str
    kind: str  # NodeType without "_NODE": COMP, COMM_COLL, COMM_SEND, COMM_RECV, MEM_LOAD, MEM_STORE, ...
    deps: tuple  # ids of the nodes it waits for (data and control dependencies)
    duration_ns: float | None = None  # COMP: replay duration
    is_cpu_op: bool = False
    num_ops: int | None = None  # COMP: for the roofline
    tensor_size: int | None = None  # COMP (roofline), MEM_LOAD / MEM_STORE: bytes
    collective: str | None = None  # COMM_COLL: netsim's kind
    nbytes: int = 0  # COMM_*: bytes
    dims: tuple | None = None  # COMM_COLL: network dimensions (None when `group` is set)
    group: tuple | None = None  # COMM_COLL: explicit NPUs of its communicator group
    shape: tuple | None = None  # COMM_COLL over a group: its axes (netsim's `group_shape`) and the
    algorithm_dims: tuple | None = None  # dimension whose algorithm each runs (System.collective)
    priority: int | None = None  # COMM_COLL
    peer: int | None = None  # COMM_SEND: destination; COMM_RECV: source
    tag: int | None = None  # COMM_SEND / COMM_RECV

    @property
    def label(self) -> str:
        return node_label(self.id, self.name)


def node_label(node_id: int, name: str) -> str:
    """How messages name a node: node 12 ('conv1.fwd')."""
    return f"node {node_id} ('{name}')"


@dataclass(frozen=True)
class NpuTrace:
    """One NPU's file: its nodes in file order and, per node, the nodes that wait for it."""

    npu: int
    path: Path
    nodes: tuple
    children: dict  # id -> tuple of ids

    def where(self, node: TraceNode) -> str:
        return f"{self.path}: {node.label}"


@dataclass(frozen=True)
class Trace:
    """A whole trace set: the prefix and one NpuTrace per NPU, rank order."""

    prefix: Path
    npus: tuple

    @property
    def name(self) -> str:
        return self.prefix.name

    def node_count(self) -> int:
        return sum(len(npu.nodes) for npu in self.npus)

    def largest_message(self) -> tuple[NpuTrace, TraceNode] | None:
        """The COMM node that moves the most bytes (a collective's bytes per NPU; the first such node of
        the lowest rank among equals) with its NPU's file, or None without communication."""
        nodes = [(node.nbytes, -npu.npu, -index, npu, node) for npu in self.npus
                 for index, node in enumerate(npu.nodes) if node.kind.startswith("COMM_") and node.nbytes]
        if not nodes:
            return None
        *_, npu, node = max(nodes, key=lambda entry: entry[:3])
        return npu, node


# ---------------------------------------------------------------------------- finding the files
def split_trace_spec(spec: str | Path) -> tuple[Path, dict[int, Path]]:
    """(prefix, {rank: file}) of a trace directory, a prefix (`dir/name` for `dir/name.<rank>.et`) or one
    of its files; ({}, ...) when nothing matches."""
    path = Path(spec).expanduser()
    if path.is_dir():
        groups: dict[str, dict[int, Path]] = defaultdict(dict)
        for file in sorted(path.iterdir()):
            match = TRACE_FILE.match(file.name)
            if match and file.is_file():
                _add_rank(groups[match["prefix"]], match["rank"], file)
        if len(groups) > 1:
            raise ConfigError(f"{path}: holds the traces of {len(groups)} workloads ({', '.join(sorted(groups))}); "
                              f"give one as DIR/NAME")
        if not groups:
            return path / "*", {}
        name, files = next(iter(groups.items()))
        return path / name, files
    match = TRACE_FILE.match(path.name)
    prefix = path.with_name(match["prefix"]) if match else path
    files = {}
    if prefix.parent.is_dir():
        for file in prefix.parent.iterdir():
            match = TRACE_FILE.match(file.name)
            if match and match["prefix"] == prefix.name and file.is_file():
                _add_rank(files, match["rank"], file)
    return prefix, files


def _add_rank(files: dict[int, Path], rank: str, file: Path) -> None:
    """Record `file` as the trace of NPU `rank`; a second file of one rank (`NAME.0.et` and
    `NAME.00.et`) is a one-line error, not one of them chosen silently."""
    number = int(rank)
    if number in files:
        first, second = sorted((files[number], file))
        raise ConfigError(f"{second}: a second trace file of rank {number} (beside {first.name}); a trace has one "
                          f"file per NPU")
    files[number] = file


def is_trace_spec(spec: str | Path) -> bool:
    """True when `spec` names Chakra traces rather than a legacy or TOML workload."""
    path = Path(spec).expanduser()
    return path.is_dir() or path.suffix == ".et" or bool(split_trace_spec(path)[1])


def trace_files(spec: str | Path, npus: int) -> tuple[Path, list[Path]]:
    """The prefix and the file of each rank 0..npus-1; a one-line error when one is missing or extra."""
    prefix, files = split_trace_spec(spec)
    if not files:
        raise ConfigError(f"{spec}: no Chakra trace files (expected {prefix}.<rank>.et, ranks 0..{npus - 1})")
    missing = [rank for rank in range(npus) if rank not in files]
    if missing:
        raise ConfigError(f"{prefix}.{missing[0]}.et: workload file does not exist (the network has {npus} NPUs; "
                          f"a trace has one file per NPU, ranks 0..{npus - 1}; found {len(files)})")
    extra = sorted(rank for rank in files if rank >= npus)
    if extra:
        raise ConfigError(f"{files[extra[0]]}: rank {extra[0]} is not an NPU of the network ({npus} NPUs, ranks "
                          f"0..{npus - 1}); the trace was made for {max(files) + 1} NPUs")
    return prefix, [files[rank] for rank in range(npus)]


# ---------------------------------------------------------------------------- attributes
class _Attributes:
    """A node's attributes by name (the first of a name wins, as in ASTRA-sim), read with type checks."""

    def __init__(self, node, where: str):
        self.where = where
        self.values = {}
        for attr in node.attr:
            self.values.setdefault(attr.name, attr)

    def has(self, name: str) -> bool:
        return name in self.values

    def _value(self, name: str) -> tuple[str | None, object]:
        attr = self.values[name]
        kind = attr.WhichOneof("value")
        return kind, (getattr(attr, kind) if kind else None)

    def integer(self, name: str, default: int | None = None, required: bool = False) -> int | None:
        if name not in self.values:
            if required:
                raise ConfigError(f"{self.where}: attribute '{name}' is missing")
            return default
        kind, value = self._value(name)
        if kind not in INTEGER_VALUES and kind != "bool_val":
            raise ConfigError(f"{self.where}: attribute '{name}': expected an integer value (int64_val, ...), "
                              f"got {kind or 'no value'}")
        return int(value)

    def number(self, name: str) -> float | None:
        if name not in self.values:
            return None
        kind, value = self._value(name)
        if kind not in INTEGER_VALUES and kind not in ("double_val", "float_val"):
            raise ConfigError(f"{self.where}: attribute '{name}': expected a number, got {kind or 'no value'}")
        return float(value)

    def boolean(self, name: str) -> bool:
        if name not in self.values:
            return False
        kind, value = self._value(name)
        if kind != "bool_val" and kind not in INTEGER_VALUES:
            raise ConfigError(f"{self.where}: attribute '{name}': expected bool_val, got {kind or 'no value'}")
        return bool(value)

    def string(self, name: str) -> str:
        if name not in self.values:
            return ""
        kind, value = self._value(name)
        if kind != "string_val":
            raise ConfigError(f"{self.where}: attribute '{name}': expected string_val, got {kind or 'no value'}")
        return value

    def integers(self, name: str) -> tuple | None:
        if name not in self.values:
            return None
        kind, value = self._value(name)
        if kind is None or not kind.endswith("_list") or kind.removesuffix("_list") + "_val" not in INTEGER_VALUES:
            raise ConfigError(f"{self.where}: attribute '{name}': expected a list of integers (int32_list, ...), "
                              f"got {kind or 'no value'}")
        return tuple(int(v) for v in value.values)

    def bools(self, name: str) -> list[bool] | None:
        if name not in self.values:
            return None
        kind, value = self._value(name)
        if kind != "bool_list":
            raise ConfigError(f"{self.where}: attribute '{name}': expected bool_list, got {kind or 'no value'}")
        return list(value.values)


# ---------------------------------------------------------------------------- one node
def _node(message, npu: int, path: Path, topology: Topology, groups: dict) -> TraceNode:
    where = f"{path}: {node_label(message.id, message.name)}"
    if message.type >= len(NODE_TYPES):
        raise ConfigError(f"{where}: unknown node type {message.type} (expected one of {', '.join(NODE_TYPES)})")
    kind = NODE_TYPES[message.type].removesuffix("_NODE")
    deps = tuple(dict.fromkeys([*message.data_deps, *message.ctrl_deps]))
    attrs = _Attributes(message, where)
    base = {"id": message.id, "name": message.name, "kind": kind, "deps": deps}
    if kind == "COMP":
        duration = attrs.number("duration_ns")
        if duration is None:
            duration = message.duration_micros * 1000.0 if message.duration_micros else 1.0  # ASTRA-sim: 0 -> 1 ns
        if not 0 <= duration <= MAX_TIME_NS:  # NaN too
            name = "duration_ns" if "duration_ns" in attrs.values else "duration_micros"
            raise ConfigError(f"{where}: attribute '{name}': expected a finite time from 0 to {MAX_TIME_NS:g} ns "
                              f"(about 11.6 days), got {duration:g} ns")
        return TraceNode(**base, duration_ns=duration, is_cpu_op=attrs.boolean("is_cpu_op"),
                         num_ops=attrs.integer("num_ops"), tensor_size=attrs.integer("tensor_size"))
    if kind in ("MEM_LOAD", "MEM_STORE"):
        return TraceNode(**base, tensor_size=_non_negative(attrs, "tensor_size", where))
    if kind == "COMM_COLL":
        return _collective(base, attrs, where, npu, topology, groups)
    if kind in ("COMM_SEND", "COMM_RECV"):
        return _point_to_point(base, attrs, where, npu, topology.npus)
    return TraceNode(**base)


def _non_negative(attrs: _Attributes, name: str, where: str) -> int:
    value = attrs.integer(name, required=True)
    if value < 0:
        raise ConfigError(f"{where}: attribute '{name}': expected bytes >= 0, got {value}")
    return value


def _collective(base: dict, attrs: _Attributes, where: str, npu: int, topology: Topology, groups: dict) -> TraceNode:
    number = attrs.integer("comm_type", required=True)
    if not 0 <= number < len(COLLECTIVE_COMM_TYPES):
        raise ConfigError(f"{where}: attribute 'comm_type': unknown collective {number} (expected 0..."
                          f"{len(COLLECTIVE_COMM_TYPES) - 1}: {', '.join(COLLECTIVE_COMM_TYPES)})")
    kind = COLLECTIVE_KINDS[COLLECTIVE_COMM_TYPES[number]]
    nbytes = 0 if kind == "barrier" and not attrs.has("comm_size") else _non_negative(attrs, "comm_size", where)
    dims, group, shape, algorithm_dims = tuple(range(len(topology.dim_sizes))), None, None, None
    pg_name = attrs.string("pg_name")
    if pg_name not in ("", "0"):  # ASTRA-sim: empty or '0' is the default group, every NPU
        group = _group(pg_name, groups, where, npu, topology.npus)
        shape, algorithm_dims = attrs.integers("group_shape"), attrs.integers("algorithm_dims")
        if (shape is None) != (algorithm_dims is None) or shape is not None and len(shape) != len(algorithm_dims):
            raise ConfigError(f"{where}: attributes 'group_shape' and 'algorithm_dims' come together, one entry "
                              f"each per axis of the group")
        if len(group) == topology.npus and shape is None:
            group = None
        else:
            dims = None
    else:
        involved = attrs.bools("involved_dim")
        if involved is not None:
            if len(involved) < len(topology.dim_sizes):
                raise ConfigError(f"{where}: attribute 'involved_dim' has {len(involved)} entries; the network has "
                                  f"{len(topology.dim_sizes)} dimensions {list(topology.dim_sizes)}")
            dims = tuple(d for d in range(len(topology.dim_sizes)) if involved[d])
    return TraceNode(**base, collective=kind, nbytes=nbytes, dims=dims, group=group, shape=shape,
                     algorithm_dims=algorithm_dims, priority=attrs.integer("comm_priority"))


def _group(pg_name: str, groups: dict, where: str, npu: int, npus: int) -> tuple:
    try:
        group = groups.get(int(pg_name))
    except ValueError:
        raise ConfigError(f"{where}: attribute 'pg_name': expected a communicator group number, got '{pg_name}'") \
            from None
    if group is None:
        known = f" (known: {', '.join(map(str, sorted(groups)))})" if groups else ""
        raise ConfigError(f"{where}: communicator group '{pg_name}' not found{known}: give its NPUs with "
                          f"--comm-groups FILE (ASTRA-sim's communicator-group JSON)")
    if npu not in group:
        raise ConfigError(f"{where}: communicator group '{pg_name}' {list(group)} does not include this NPU ({npu})")
    bad = [n for n in group if not 0 <= n < npus]
    if bad:
        raise ConfigError(f"{where}: communicator group '{pg_name}' names NPU {bad[0]}; the network has {npus} NPUs")
    return group


def _point_to_point(base: dict, attrs: _Attributes, where: str, npu: int, npus: int) -> TraceNode:
    sending = base["kind"] == "COMM_SEND"
    own, peer_name = ("comm_src", "comm_dst") if sending else ("comm_dst", "comm_src")
    if attrs.integer(own, npu) != npu:
        raise ConfigError(f"{where}: attribute '{own}' is {attrs.integer(own)}, but this is NPU {npu}'s file "
                          f"(a {'send' if sending else 'receive'} is issued by its {'sender' if sending else 'receiver'})")
    peer = attrs.integer(peer_name, required=True)
    if not 0 <= peer < npus:
        raise ConfigError(f"{where}: attribute '{peer_name}': NPU {peer} does not exist (the network has {npus} NPUs)")
    nbytes = attrs.integer("comm_size", required=True)
    if nbytes < 1:
        raise ConfigError(f"{where}: attribute 'comm_size': expected at least 1 byte, got {nbytes}")
    return TraceNode(**base, nbytes=nbytes, peer=peer, tag=attrs.integer("comm_tag", required=True))


# ---------------------------------------------------------------------------- one file
def _graph(npu: int, path: Path, messages: list, topology: Topology, groups: dict) -> NpuTrace:
    nodes, seen = [], {}
    for message in messages:
        node = _node(message, npu, path, topology, groups)
        if node.id in seen:
            raise ConfigError(f"{path}: {node.label}: node id {node.id} is used twice (also by '{seen[node.id]}')")
        seen[node.id] = node.name
        nodes.append(node)
    children: dict[int, list] = {node.id: [] for node in nodes}
    for node in nodes:
        for dep in node.deps:
            if dep not in children:
                raise ConfigError(f"{path}: {node.label} depends on node {dep}, which is not in the file")
            children[dep].append(node.id)
    _check_acyclic(path, nodes, children)
    return NpuTrace(npu, path, tuple(nodes), {k: tuple(v) for k, v in children.items()})


def _check_acyclic(path: Path, nodes: list, children: dict) -> None:
    """Kahn's algorithm; nodes left over lie on or behind a cycle, one of which is named."""
    waiting = {node.id: len(node.deps) for node in nodes}
    ready = [node.id for node in nodes if not node.deps]
    while ready:
        for child in children[ready.pop()]:
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    stuck = {node_id for node_id, count in waiting.items() if count > 0}
    if not stuck:
        return
    by_id = {node.id: node for node in nodes}
    chain, current = [], next(node.id for node in nodes if node.id in stuck)
    while current not in chain:  # follow unfinished dependencies until one repeats
        chain.append(current)
        current = next(dep for dep in by_id[current].deps if dep in stuck)
    cycle = chain[chain.index(current):] + [current]
    raise ConfigError(f"{path}: dependency cycle: " + " waits for ".join(by_id[i].label for i in cycle))


# ---------------------------------------------------------------------------- the trace set
def load_trace(spec: str | Path, topology: Topology, groups: dict | None = None) -> Trace:
    """Read and check every NPU's file of the trace `spec` (directory, prefix or one file) for `topology`.

    `groups` maps communicator group numbers (`pg_name`) to NPU ids (ASTRA-sim's --comm-group-configuration).
    """
    prefix, paths = trace_files(spec, topology.npus)
    npus = []
    for npu, path in enumerate(paths):
        _metadata, messages = read_trace_file(path)
        npus.append(_graph(npu, path, messages, topology, groups or {}))
    trace = Trace(prefix, tuple(npus))
    _check_point_to_point(trace)
    _check_collectives(trace, topology)
    return trace


def _check_point_to_point(trace: Trace) -> None:
    """Every send has a receive of the same size on its peer with the same tag, in the same order."""
    sends, recvs = defaultdict(list), defaultdict(list)
    for npu in trace.npus:
        for node in npu.nodes:
            if node.kind == "COMM_SEND":
                sends[(npu.npu, node.peer, node.tag)].append((npu, node))
            elif node.kind == "COMM_RECV":
                recvs[(node.peer, npu.npu, node.tag)].append((npu, node))
    for key in sorted(set(sends) | set(recvs)):
        src, dst, tag = key
        for (s_npu, send), (r_npu, recv) in zip(sends[key], recvs[key]):
            if send.nbytes != recv.nbytes:
                raise ConfigError(f"{s_npu.where(send)}: sends {send.nbytes} B to NPU {dst} with tag {tag}, but "
                                  f"{r_npu.where(recv)} expects {recv.nbytes} B")
        extra_sends, extra_recvs = sends[key][len(recvs[key]):], recvs[key][len(sends[key]):]
        if extra_sends:
            npu, node = extra_sends[0]
            raise ConfigError(f"{npu.where(node)}: send to NPU {dst} with tag {tag} has no matching receive in "
                              f"{trace.npus[dst].path} ({len(sends[key])} sends, {len(recvs[key])} receives)")
        if extra_recvs:
            npu, node = extra_recvs[0]
            raise ConfigError(f"{npu.where(node)}: receive from NPU {src} with tag {tag} has no matching send in "
                              f"{trace.npus[src].path} ({len(sends[key])} sends, {len(recvs[key])} receives)")


def _check_collectives(trace: Trace, topology: Topology) -> None:
    """Every member of a collective's communicator issues the same collectives (kind and size) over it."""
    issued: dict[tuple, dict[int, Counter]] = defaultdict(lambda: defaultdict(Counter))
    example: dict[tuple, tuple] = {}  # (members, npu, kind, bytes) -> (NpuTrace, node) of its first such node
    members_of: dict[tuple, tuple] = {}
    for npu in trace.npus:
        for node in npu.nodes:
            if node.kind != "COMM_COLL":
                continue
            members = node.group
            if members is None:
                key = (npu.npu, node.dims)
                if key not in members_of:
                    members_of[key] = Communicator.over_dims(topology, npu.npu, node.dims).members
                members = members_of[key]
            issued[members][npu.npu][(node.collective, node.nbytes)] += 1
            example.setdefault((members, npu.npu, node.collective, node.nbytes), (npu, node))
    for members, per_npu in issued.items():
        reference = per_npu[members[0]]
        for other in members[1:]:
            if per_npu[other] == reference:
                continue
            for has, lacks in ((members[0], other), (other, members[0])):
                missing = per_npu[has] - per_npu[lacks]
                if missing:
                    (kind, nbytes), count = next(iter(missing.items()))
                    npu, node = example[(members, has, kind, nbytes)]
                    raise ConfigError(f"{npu.where(node)}: {kind} of {nbytes} B over NPUs {_npus(members)} has no "
                                      f"counterpart in {trace.npus[lacks].path} (NPU {lacks} issues "
                                      f"{per_npu[has][(kind, nbytes)] - count} such collectives, NPU {has} "
                                      f"{per_npu[has][(kind, nbytes)]})")


def _npus(members: tuple) -> str:
    if len(members) > 8:
        return f"[{', '.join(map(str, members[:6]))}, ... {members[-1]}] ({len(members)} NPUs)"
    return str(list(members))


def load_comm_groups(path: str | Path) -> dict[int, tuple]:
    """ASTRA-sim's communicator-group JSON, `{"1": [0, 1, 2, 3], ...}`: group number -> NPU ids (sorted,
    as ASTRA-sim sorts them). Group 0 is reserved for every NPU."""
    table, source = read_json_object(Path(path))
    groups = {}
    for key, npus in table.items():
        if not key.isdecimal() or int(key) < 1:
            raise source.error(key, "expected a communicator group number >= 1 (0 is every NPU)")
        if not (isinstance(npus, list) and npus and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                                                          for n in npus)):
            raise source.error(key, f"expected a list of NPU ids, got {npus!r}")
        if len(set(npus)) != len(npus):
            raise source.error(key, f"lists an NPU twice: {npus}")
        groups[int(key)] = tuple(sorted(npus))
    return groups
