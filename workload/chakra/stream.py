"""Chakra's file layout: a stream of length-delimited protobuf messages.

Each message is preceded by its size as a base-128 varint (protobuf's own encoding); an `.et`
file is one GlobalMetadata message followed by one Node message per node.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, Iterator

from google.protobuf.message import DecodeError

from netsim.errors import ConfigError
from netsim.files import whole_file
from workload.chakra.schema import GlobalMetadata, Node

MAX_VARINT_BYTES = 10  # a uint64 needs at most 10 groups of 7 bits


def varint(value: int) -> bytes:
    """`value` (>= 0) as a base-128 varint, least significant group first."""
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def write_message(stream: BinaryIO, message) -> None:
    payload = message.SerializeToString()
    stream.write(varint(len(payload)))
    stream.write(payload)


def _frames(data: bytes, path: Path) -> Iterator[tuple[int, bytes]]:
    """(offset, payload) of each length-delimited message in `data`."""
    offset = 0
    while offset < len(data):
        start, size, shift = offset, 0, 0
        while True:
            if offset >= len(data) or offset - start >= MAX_VARINT_BYTES:
                raise ConfigError(f"{path}: byte {start}: truncated or malformed message length "
                                  f"(expected a varint-prefixed Chakra message)")
            byte = data[offset]
            offset += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        if offset + size > len(data):
            raise ConfigError(f"{path}: byte {start}: message of {size} bytes runs past the end of the file "
                              f"({len(data) - offset} bytes left); the file is truncated or not a Chakra trace")
        yield start, data[offset:offset + size]
        offset += size


def read_trace_file(path: Path) -> tuple[object, list]:
    """(GlobalMetadata, [Node, ...]) of one `.et` file; a one-line error names the file and byte."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the trace file ({exc.strerror or exc})") from None
    frames = _frames(data, path)
    first = next(frames, None)
    if first is None:
        raise ConfigError(f"{path}: empty file (expected Chakra's global metadata, then the nodes)")
    metadata = _parse(GlobalMetadata, first, path, "global metadata")
    nodes = [_parse(Node, frame, path, f"node message {index}") for index, frame in enumerate(frames)]
    return metadata, nodes


def _parse(cls, frame: tuple[int, bytes], path: Path, what: str):
    offset, payload = frame
    message = cls()
    try:
        message.ParseFromString(payload)
    except DecodeError as exc:
        raise ConfigError(f"{path}: byte {offset}: {what} is not a valid Chakra {cls.DESCRIPTOR.name} ({exc})") from None
    return message


def write_trace_file(path: Path, metadata, nodes) -> None:
    """Write one `.et` file, whole or not at all: `metadata`, then every node, each length-delimited."""
    with whole_file(path, binary=True, what="the trace file") as stream:
        write_message(stream, metadata)
        for node in nodes:
            write_message(stream, node)
