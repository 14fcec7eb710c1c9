"""Fixed-size tables of 64-bit integers: the per-VC and per-port state of the packet core's units
and allocators. An `array` in the uncompiled reference; the compiled build types the same object as
a C array view (`long long[::1]` in the .pxd files), so reading and writing an entry costs no
Python integer."""

from __future__ import annotations

from array import array


def counts(n: int, value: int = 0) -> array:
    """`n` 64-bit integers, each `value`."""
    return array("q", [value]) * n
