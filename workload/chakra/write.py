"""Write a legacy or TOML workload as Chakra traces, one `NAME.<rank>.et` file per NPU.

The workload's training loop is recorded on the target network (workload.chakra.record) and each
operation becomes a node whose data dependencies are the operations it waited for:

- compute and weight updates: COMP_NODE with `duration_micros` (whole microseconds, what
  ASTRA-sim reads) and netsim's exact `duration_ns`;
- collective: COMM_COLL_NODE with `comm_type`, `comm_size`, `involved_dim` (or `pg_name` for an
  explicit group of NPUs, listed in `NAME.comm_groups.json`, ASTRA-sim's communicator-group file)
  and `comm_priority` when the loop gives one;
- send / receive: COMM_SEND_NODE / COMM_RECV_NODE with `comm_src`, `comm_dst`, `comm_size` and a
  numeric `comm_tag` (the same number on both sides).
"""

from __future__ import annotations

import json
from pathlib import Path

from netsim.errors import ConfigError
from netsim.files import cannot_write, write_whole
from netsim.files import folder_name
from netsim.topology import Topology
from workload.chakra.record import Op, record
from workload.chakra.schema import COLLECTIVE_COMM_TYPES, AttributeProto, BoolList, GlobalMetadata, Int32List, Node
from workload.chakra.stream import write_trace_file
from workload.chakra.trace import COLLECTIVE_KINDS
from workload.model import Workload

CHAKRA_VERSION = "0.0.4"  # the version ASTRA-sim's own trace generators write
# netsim's kind -> Chakra's CollectiveCommType number; reduce-scatter is REDUCE_SCATTER, not _BLOCK
COMM_TYPE_NUMBER = {kind: COLLECTIVE_COMM_TYPES.index(name) for name, kind in COLLECTIVE_KINDS.items()
                    if name != "REDUCE_SCATTER_BLOCK"}


class _Numbering:
    """Small integers for hashable keys, the same on every NPU: tags and communicator groups."""

    def __init__(self, first: int):
        self.numbers: dict = {}
        self.first = first

    def __call__(self, key) -> int:
        return self.numbers.setdefault(key, self.first + len(self.numbers))


def _attr(name: str, **value) -> AttributeProto:
    return AttributeProto(name=name, **value)


def _node_type(name: str) -> int:
    return Node.DESCRIPTOR.fields_by_name["type"].enum_type.values_by_name[name].number


def node_message(op: Op, npu: int, dims_count: int, tags: _Numbering, groups: _Numbering) -> Node:
    """The Chakra node of one operation recorded on `npu`."""
    node = Node(id=op.id, name=op.name, data_deps=op.deps)
    attrs = node.attr
    attrs.append(_attr("is_cpu_op", bool_val=False))  # all on the NPU (ASTRA-sim's statistics reject host ops)
    if op.kind == "COMP":
        node.type = _node_type("COMP_NODE")
        node.duration_micros = round(op.duration_ns / 1000)
        attrs.append(_attr("duration_ns", double_val=float(op.duration_ns)))
        return node
    if op.kind == "COMM_COLL":
        node.type = _node_type("COMM_COLL_NODE")
        attrs.append(_attr("comm_type", int64_val=COMM_TYPE_NUMBER[op.collective]))
        attrs.append(_attr("comm_size", int64_val=op.nbytes))
        if op.group is not None:
            attrs.append(_attr("pg_name", string_val=str(groups(op.group))))
            if op.shape is not None:  # netsim's own: the group's axes, each phased with a dimension's algorithm
                attrs.append(_attr("group_shape", int32_list=Int32List(values=op.shape)))
                attrs.append(_attr("algorithm_dims", int32_list=Int32List(values=op.algorithm_dims)))
        else:
            attrs.append(_attr("involved_dim", bool_list=BoolList(values=[d in op.dims for d in range(dims_count)])))
        if op.priority is not None:
            if op.priority != int(op.priority):
                raise ConfigError(f"{op.name}: collective priority {op.priority} is not an integer; Chakra's "
                                  f"comm_priority is")
            attrs.append(_attr("comm_priority", int32_val=int(op.priority)))
        return node
    sending = op.kind == "COMM_SEND"
    node.type = _node_type("COMM_SEND_NODE" if sending else "COMM_RECV_NODE")
    attrs.append(_attr("comm_src", int32_val=npu if sending else op.peer))
    attrs.append(_attr("comm_dst", int32_val=op.peer if sending else npu))
    attrs.append(_attr("comm_size", int64_val=op.nbytes))
    attrs.append(_attr("comm_tag", int32_val=tags(op.tag)))
    return node


def trace_stem(workload: Workload) -> str:
    """The PREFIX of a workload's trace files PREFIX.<rank>.et: its name as one safe path component."""
    return folder_name(workload.name)


def write_chakra(workload: Workload, topology: Topology, out_dir: Path, passes: int = 1) -> list[Path]:
    """Record `passes` iterations of `workload` on `topology` and write the traces into `out_dir`;
    returns the files written (the trace files in rank order, then the communicator groups, if any).
    The files are named by the workload's name made one safe path component (trace_stem): a name
    with '/' or '..' (from a file the user may not have written) stays inside `out_dir`."""
    try:  # before recording: a file where the folder should be, or no permission, is said at once
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(exc.filename or out_dir, exc, "the traces") from None
    graphs = record(workload, topology, passes)
    stem = trace_stem(workload)
    tags, groups = _Numbering(0), _Numbering(1)  # ASTRA-sim: group 0 is every NPU
    metadata = GlobalMetadata(version=CHAKRA_VERSION, attr=[
        _attr("generator", string_val="netsim workload to-chakra"),
        _attr("workload", string_val=workload.path or workload.name),
        _attr("loop", string_val=workload.parallelism),
        _attr("passes", int64_val=passes),
        _attr("npus", int64_val=topology.npus)])
    written = []
    for npu, ops in enumerate(graphs):
        path = out_dir / f"{stem}.{npu}.et"
        write_trace_file(path, metadata, [node_message(op, npu, len(topology.dim_sizes), tags, groups) for op in ops])
        written.append(path)
    if groups.numbers:
        path = out_dir / f"{stem}.comm_groups.json"
        write_whole(path, json.dumps({str(n): list(group) for group, n in groups.numbers.items()}, indent=2) + "\n")
        written.append(path)
    return written
