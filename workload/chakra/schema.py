"""The Chakra execution-trace schema (ASTRA-sim 2.x's `et_def.proto`), declared in Python.

The message classes are built at import time from a descriptor written out below, so netsim
needs the `protobuf` runtime only: no protoc, no generated module to keep in step with it. Field
names and numbers are those of Chakra's schema (package `ChakraProtoMsg`), so the bytes are the
same as those written and read by Chakra's own tools and ASTRA-sim.

    GlobalMetadata  version, attr[]
    Node            id, name, type, ctrl_deps[], data_deps[], start_time_micros, duration_micros,
                    inputs, outputs (IOInfo), attr[]
    AttributeProto  name, doc_string, one value: <scalar>_val or <scalar>_list for each scalar type
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "ChakraProtoMsg"

NODE_TYPES = ("INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE", "COMM_SEND_NODE",
              "COMM_RECV_NODE", "COMM_COLL_NODE")
COLLECTIVE_COMM_TYPES = ("ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER", "BROADCAST", "ALL_TO_ALL",
                         "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER")

_F = descriptor_pb2.FieldDescriptorProto
# AttributeProto's value: each scalar type as `<name>_val` (field 3 + 2i) and `<name>_list` (4 + 2i),
# the list being a message `<Name>List { repeated <name> values = 1; }`.
ATTRIBUTE_SCALARS = (("double", _F.TYPE_DOUBLE), ("float", _F.TYPE_FLOAT), ("int32", _F.TYPE_INT32),
                     ("int64", _F.TYPE_INT64), ("uint32", _F.TYPE_UINT32), ("uint64", _F.TYPE_UINT64),
                     ("sint32", _F.TYPE_SINT32), ("sint64", _F.TYPE_SINT64), ("fixed32", _F.TYPE_FIXED32),
                     ("fixed64", _F.TYPE_FIXED64), ("sfixed32", _F.TYPE_SFIXED32), ("sfixed64", _F.TYPE_SFIXED64),
                     ("bool", _F.TYPE_BOOL), ("string", _F.TYPE_STRING), ("bytes", _F.TYPE_BYTES))


def _field(message: descriptor_pb2.DescriptorProto, name: str, number: int, kind: int, *, repeated: bool = False,
           type_name: str = "", oneof: int | None = None) -> None:
    field = message.field.add(name=name, number=number, type=kind,
                              label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
    if type_name:
        field.type_name = f".{PACKAGE}.{type_name}"
    if oneof is not None:
        field.oneof_index = oneof


def _list_name(scalar: str) -> str:
    return scalar.capitalize() + "List"


def file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """The schema as a FileDescriptorProto (what protoc would build from et_def.proto)."""
    proto = descriptor_pb2.FileDescriptorProto(name="et_def.proto", package=PACKAGE, syntax="proto3")
    attribute = proto.message_type.add(name="AttributeProto")
    _field(attribute, "name", 1, _F.TYPE_STRING)
    _field(attribute, "doc_string", 2, _F.TYPE_STRING)
    attribute.oneof_decl.add(name="value")
    for index, (scalar, kind) in enumerate(ATTRIBUTE_SCALARS):
        _field(attribute, f"{scalar}_val", 3 + 2 * index, kind, oneof=0)
        _field(attribute, f"{scalar}_list", 4 + 2 * index, _F.TYPE_MESSAGE, type_name=_list_name(scalar), oneof=0)
    for scalar, kind in ATTRIBUTE_SCALARS:
        _field(proto.message_type.add(name=_list_name(scalar)), "values", 1, kind, repeated=True)

    metadata = proto.message_type.add(name="GlobalMetadata")
    _field(metadata, "version", 1, _F.TYPE_STRING)
    _field(metadata, "attr", 2, _F.TYPE_MESSAGE, repeated=True, type_name="AttributeProto")

    for enum_name, values in (("NodeType", NODE_TYPES), ("CollectiveCommType", COLLECTIVE_COMM_TYPES)):
        enum = proto.enum_type.add(name=enum_name)
        for number, value in enumerate(values):
            enum.value.add(name=value, number=number)

    node = proto.message_type.add(name="Node")
    _field(node, "id", 1, _F.TYPE_UINT64)
    _field(node, "name", 2, _F.TYPE_STRING)
    _field(node, "type", 3, _F.TYPE_ENUM, type_name="NodeType")
    _field(node, "ctrl_deps", 4, _F.TYPE_UINT64, repeated=True)
    _field(node, "data_deps", 5, _F.TYPE_UINT64, repeated=True)
    _field(node, "start_time_micros", 6, _F.TYPE_UINT64)
    _field(node, "duration_micros", 7, _F.TYPE_UINT64)
    _field(node, "inputs", 8, _F.TYPE_MESSAGE, type_name="IOInfo")
    _field(node, "outputs", 9, _F.TYPE_MESSAGE, type_name="IOInfo")
    _field(node, "attr", 10, _F.TYPE_MESSAGE, repeated=True, type_name="AttributeProto")

    io_info = proto.message_type.add(name="IOInfo")
    for number, name in enumerate(("values", "shapes", "types"), start=1):
        _field(io_info, name, number, _F.TYPE_STRING)
    return proto


# A pool of its own, so another copy of Chakra's schema loaded in the same process cannot clash with it.
_POOL = descriptor_pool.DescriptorPool()
_FILE = _POOL.Add(file_descriptor())


def _message(name: str):
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.{name}"))


GlobalMetadata = _message("GlobalMetadata")
Node = _message("Node")
AttributeProto = _message("AttributeProto")
IOInfo = _message("IOInfo")
BoolList = _message("BoolList")
Int32List = _message("Int32List")
