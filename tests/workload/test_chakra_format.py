"""The Chakra file format: the schema's wire bytes, ASTRA-sim's own sample traces, bad files."""

from pathlib import Path

import pytest

from netsim.errors import ConfigError
from tests.helpers import chakra_node
from workload.chakra.schema import AttributeProto, BoolList, GlobalMetadata, Node
from workload.chakra.stream import read_trace_file, varint, write_trace_file

DATA = Path(__file__).parents[1] / "data" / "chakra"


def test_node_bytes_follow_chakra_field_numbers():
    """Hand-encoded protobuf wire bytes (field number << 3 | wire type) of Chakra's et_def.proto:
    Node.id = 1, name = 2, type = 3, data_deps = 5 (packed), duration_micros = 7, attr = 10;
    AttributeProto.name = 1, int64_val = 9, bool_list = 28 with BoolList.values = 1."""
    node = Node(id=5, name="n", type=7, data_deps=[1, 2], duration_micros=3)
    node.attr.append(AttributeProto(name="comm_size", int64_val=1048576))
    assert node.SerializeToString().hex() == "0805" "12016e" "1807" "2a020102" "3803" "520f0a09636f6d6d5f73697a6548808040"
    attr = AttributeProto(name="d", bool_list=BoolList(values=[True, False]))
    assert attr.SerializeToString().hex() == "0a0164" "e201" "04" "0a020100"
    ctrl = Node(ctrl_deps=[300])
    assert ctrl.SerializeToString().hex() == "2202ac02"  # field 4, packed varint 300


def test_varint_is_base_128_least_significant_first():
    assert varint(0) == b"\x00"
    assert varint(127) == b"\x7f"
    assert varint(300) == b"\xac\x02"
    assert varint(2**64 - 1) == b"\xff" * 9 + b"\x01"


@pytest.mark.parametrize("kind, comm_type", [("all_reduce", 0), ("all_gather", 2), ("all_to_all", 6),
                                             ("reduce_scatter", 7)])
def test_reads_astra_sim_microbenchmark_traces(kind, comm_type):
    for npu in range(8):
        metadata, nodes = read_trace_file(DATA / kind / f"{kind}.{npu}.et")
        assert metadata.version == "0.0.4"
        assert len(nodes) == 1
        node = nodes[0]
        assert node.type == Node.DESCRIPTOR.fields_by_name["type"].enum_type.values_by_name["COMM_COLL_NODE"].number
        attrs = {attr.name: attr for attr in node.attr}
        assert attrs["comm_type"].int64_val == comm_type
        assert attrs["comm_size"].int64_val == 1 << 20
        assert attrs["is_cpu_op"].bool_val is False


def test_write_then_read_gives_the_same_messages(tmp_path):
    nodes = [chakra_node(0, "COMP", micros=5), chakra_node(7, "COMM_COLL", deps=[0], ctrl=[0],
                                                             comm_type=("int64_val", 0), comm_size=("int64_val", 300),
                                                             involved_dim=("bool_list", [True, False]))]
    path = tmp_path / "t.0.et"
    write_trace_file(path, GlobalMetadata(version="x"), nodes)
    metadata, read = read_trace_file(path)
    assert metadata.version == "x"
    assert [n.SerializeToString() for n in read] == [n.SerializeToString() for n in nodes]


@pytest.mark.parametrize("content, message", [
    (b"", "empty file"),
    (b"\x05\x0a\x03", "byte 0: message of 5 bytes runs past the end of the file"),
    (b"\x00\xff", "byte 1: truncated or malformed message length"),
    (b"\x00\x03\xff\xff\xff", "byte 1: node message 0 is not a valid Chakra Node"),
])
def test_bad_files_are_one_line_errors_naming_file_and_byte(tmp_path, content, message):
    path = tmp_path / "bad.0.et"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message) as error:
        read_trace_file(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)
