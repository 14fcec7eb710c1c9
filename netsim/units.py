"""Parse sizes, bandwidths and times written with units into netsim's base units.

Base units: bytes (int), GB/s (float, decimal; 1 GB/s = 1 byte/ns) and nanoseconds (float).
Plain numbers are taken to be in the base unit already. Parsers raise `UnitError`, whose
message names the expected form; `netsim.config` adds the file and key.
"""

from __future__ import annotations

import math
import re

_NUMBER_WITH_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-zµ/]*)\s*$")

SIZE_UNITS = {
    "": 1, "b": 1, "byte": 1, "bytes": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}

# Factor to GB/s (bytes per ns).
BANDWIDTH_UNITS = {
    "": 1.0,
    "b/s": 1e-9, "kb/s": 1e-6, "mb/s": 1e-3, "gb/s": 1.0, "tb/s": 1e3,
    "kib/s": 2**10 / 1e9, "mib/s": 2**20 / 1e9, "gib/s": 2**30 / 1e9, "tib/s": 2**40 / 1e9,
    "bps": 1e-9 / 8, "kbps": 1e-6 / 8, "mbps": 1e-3 / 8, "gbps": 1 / 8, "tbps": 1e3 / 8,
}
# Lower-cased lookups would confuse bits (Gb/s) with bytes (GB/s): those are resolved first.
_BIT_RATE_UNITS = {"Kb/s": 1e-6 / 8, "Mb/s": 1e-3 / 8, "Gb/s": 1 / 8, "Tb/s": 1e3 / 8}

# Factor to nanoseconds.
TIME_UNITS = {"": 1.0, "ps": 1e-3, "ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
CYCLE_UNITS = ("cycle", "cycles", "cyc")


# The physical range of what netsim reads: beyond it a run's arithmetic overflows (a utilization of
# inf), or its events fall past any horizon and it stops as if deadlocked; said at load time instead.
LINK_BANDWIDTH_RANGE_GBPS = (1e-6, 1e12)  # per link: 1 kB/s to 1 ZB/s (tests model "infinitely fast" by 1e12)
MAX_TIME_NS = 1e15  # a latency, delay or compute time: about 11.6 days
MAX_CYCLES = 10**15  # a count of clock cycles
MAX_SIZE_BYTES = 2**63 - 1  # a message or buffer: 64-bit, as ASTRA-sim reads sizes


class UnitError(ValueError):
    """A value could not be read in the expected unit; the message says what was expected."""


def _split(value: object, expected: str) -> tuple[float, str]:
    if isinstance(value, bool):
        raise UnitError(f"expected {expected}, got {value!r}")
    if isinstance(value, (int, float)):
        number, unit = float(value), ""
    elif isinstance(value, str) and (match := _NUMBER_WITH_UNIT.match(value)):
        number, unit = float(match.group(1)), match.group(2)
    else:
        raise UnitError(f"expected {expected}, got {value!r}")
    if not math.isfinite(number):
        raise UnitError(f"expected {expected}, got {value!r} (not a finite number)")
    return number, unit


def parse_size(value: object) -> int:
    """'64MiB' -> 67108864. Plain numbers are bytes; the result must be a whole, non-negative number."""
    expected = "a size like '64MiB', '4KiB', '1GB' or a number of bytes"
    number, unit = _split(value, expected)
    factor = SIZE_UNITS.get(unit.lower())
    if factor is None:
        raise UnitError(f"expected {expected}, got {value!r} (unknown unit {unit!r})")
    nbytes = number * factor
    if nbytes < 0 or not math.isclose(nbytes, round(nbytes), abs_tol=1e-6):
        raise UnitError(f"expected {expected}, got {value!r} (not a whole, non-negative number of bytes)")
    if nbytes > MAX_SIZE_BYTES:
        raise UnitError(f"expected {expected}, got {value!r} (beyond 2^63 - 1 bytes)")
    return int(round(nbytes))


def parse_bandwidth(value: object) -> float:
    """'100GB/s' -> 100.0 (GB/s = bytes/ns). Plain numbers are GB/s; 'Gbps'/'Gb/s' are bits."""
    expected = "a bandwidth like '100GB/s', '400Gbps' or a number of GB/s"
    number, unit = _split(value, expected)
    if unit.lower().endswith("bps") and "B" in unit:  # 'GBps': bytes to some readers, bits to others
        prefix = unit[:-3]
        raise UnitError(f"expected {expected}, got {value!r} (ambiguous unit {unit!r}: write "
                        f"'{prefix}B/s' for bytes or '{prefix}bps' for bits)")
    factor = _BIT_RATE_UNITS.get(unit)
    if factor is None:
        factor = BANDWIDTH_UNITS.get(unit.lower())
    if factor is None:
        raise UnitError(f"expected {expected}, got {value!r} (unknown unit {unit!r})")
    if number <= 0:
        raise UnitError(f"expected {expected}, got {value!r} (must be positive)")
    return number * factor


def parse_link_bandwidth(value: object) -> float:
    """A link's bandwidth (parse_bandwidth) within LINK_BANDWIDTH_RANGE_GBPS: beyond it a run's
    arithmetic overflows (1e-300 GB/s gave a utilization of inf). (A memory bandwidth may be larger:
    ASTRA-sim's configs write 1e9 GB/s for 'no limit'.)"""
    bandwidth = parse_bandwidth(value)
    low, high = LINK_BANDWIDTH_RANGE_GBPS
    if not low <= bandwidth <= high:
        raise UnitError(f"expected a link bandwidth from {low:g} to {high:g} GB/s (1 kB/s to 1 ZB/s), got {value!r}")
    return bandwidth


def parse_time(value: object, clock_ghz: float | None = None) -> float:
    """'1.5us' -> 1500.0 ns. Plain numbers are ns; 'N cycles' needs the clock in GHz."""
    expected = "a time like '500ns', '1.5us', '3cycles' or a number of ns"
    number, unit = _split(value, expected)
    if unit.lower() in CYCLE_UNITS:
        if clock_ghz is None:
            raise UnitError(f"expected {expected} (cycles need a clock), got {value!r}")
        result = number / clock_ghz
    else:
        factor = TIME_UNITS.get(unit if unit in TIME_UNITS else unit.lower())
        if factor is None:
            raise UnitError(f"expected {expected}, got {value!r} (unknown unit {unit!r})")
        result = number * factor
    if result < 0:
        raise UnitError(f"expected {expected}, got {value!r} (must not be negative)")
    if result > MAX_TIME_NS:
        raise UnitError(f"expected {expected}, got {value!r} (beyond {MAX_TIME_NS:g} ns, about 11.6 days)")
    return result


def parse_cycles(value: object, clock_ghz: float) -> int:
    """'3cycles' -> 3; a time ('2ns') is converted with the clock and rounded up to whole cycles.

    Plain numbers are cycles here, because cycle-valued keys (router_latency, ...) are counted in
    cycles by default.
    """
    expected = "a whole number of cycles like '3cycles' or a time like '2ns'"
    number, unit = _split(value, expected)
    if unit == "" or unit.lower() in CYCLE_UNITS:
        cycles = number
    else:
        cycles = parse_time(value) * clock_ghz
    if cycles < 0:
        raise UnitError(f"expected {expected}, got {value!r} (must not be negative)")
    if cycles > MAX_CYCLES:
        raise UnitError(f"expected {expected}, got {value!r} (beyond {MAX_CYCLES:g} cycles)")
    return int(math.ceil(cycles - 1e-9))


def ns_to_cycles(ns: float, clock_ghz: float) -> int:
    """The whole cycles of a `clock_ghz` clock that cover `ns` (rounded up, float noise forgiven)."""
    return math.ceil(ns * clock_ghz - 1e-9)


def format_size(nbytes: float) -> str:
    """Human-readable binary size: 67108864 -> '64MiB'."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(nbytes) >= factor:
            value = nbytes / factor
            return f"{value:.4g}{unit}"
    return f"{int(nbytes)}B"


DISPLAY_TIME_UNITS = (("s", 1e9), ("ms", 1e6), ("us", 1e3), ("ns", 1.0))


def time_unit(ns: float) -> tuple[str, float]:
    """(unit, ns per unit) that shows `ns` as a number between 1 and 1000 where it can."""
    for unit, factor in DISPLAY_TIME_UNITS:
        if abs(ns) >= factor:
            return unit, factor
    return "ns", 1.0


def format_time(ns: float) -> str:
    """Human-readable time: 1500.0 -> '1.5us'."""
    unit, factor = time_unit(ns)
    return f"{ns / factor:.4g}{unit}"
