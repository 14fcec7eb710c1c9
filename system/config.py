"""SystemConfig: collective algorithms per dimension and the chunk scheduler's settings.

Read from three forms into one validated dataclass: netsim TOML, ASTRA-sim's legacy
"key: value" text and ASTRA-sim 2.x JSON. Keys use ASTRA-sim's names (`endpoint-delay`,
`preferred-dataset-splits`, ...). An algorithm list has one entry per network dimension
(`all-reduce-implementation = ["ring", "ring"]`, or ASTRA-sim's "ring_ring"); a single name
without underscores applies to every dimension.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netsim.bundled import find_config
from netsim.config import (Source, apply_override, as_int, as_str, build, choice, did_you_mean, positive_float,
                           positive_int, read_json_object, read_text, read_toml, repeated_key, setting)
from netsim.errors import ConfigError, NetsimWarning
from netsim.units import UnitError, parse_bandwidth, parse_time
from system.scheduler import INTER_POLICIES, INTRA_POLICIES

SYSTEM_SUFFIXES = (".toml", ".txt", ".json")

# ASTRA-sim spelling -> netsim name. Only algorithms in system.algorithms.ALGORITHMS may run.
ALGORITHM_ALIASES = {
    "ring": "ring", "direct": "direct", "halvingdoubling": "halving-doubling",
    "doublebinarytree": "double-binary-tree", "recursivedoubling": "recursive-doubling",
    "onering": "one-ring", "onedirect": "one-direct", "onehalvingdoubling": "one-halving-doubling",
    "binarytree": "binary-tree",
}


def canonical_algorithm(name: str) -> str:
    """'doubleBinaryTree' / 'double-binary-tree' -> 'double-binary-tree'; unknown names kept for the error."""
    key = name.strip().replace("-", "").replace("_", "").lower()
    if key.startswith("direct") and key[6:].isdecimal():
        return f"direct{key[6:]}"
    return ALGORITHM_ALIASES.get(key, name.strip())


def algorithm_list(value: Any) -> tuple[str, ...]:
    """'ring_direct' or ['ring', 'direct'] -> ('ring', 'direct'); 'ring' -> ('ring',) for every dimension."""
    if isinstance(value, str):
        parts = value.split("_")
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        parts = list(value)
    else:
        raise UnitError(f"expected an algorithm name, a list of names or 'ring_direct', got {value!r}")
    if not parts or not all(part.strip() for part in parts):  # ('ring_' or '' is a name left out, not a default)
        raise UnitError(f"expected algorithm names, one per dimension joined by '_' (e.g. 'ring_direct'), got {value!r}")
    return tuple(canonical_algorithm(p) for p in parts)


def non_negative_time(value: Any) -> float:
    return parse_time(value)


@dataclass(frozen=True)
class SystemConfig:
    """The system layer's settings: each key declared once below, with its parser and meaning."""

    name: str = setting("", parse=as_str, help="short name used in reports")
    scheduling_policy: str = setting("FIFO", key="scheduling-policy", parse=choice("FIFO", "LIFO"),
                                     help="order of waiting chunks across collectives: FIFO or LIFO")
    endpoint_delay: float = setting(10.0, key="endpoint-delay", parse=non_negative_time,
                                    help="time an NPU spends per algorithm step (ns; ASTRA-sim cycles = ns)")
    active_chunks_per_dimension: int = setting(1, key="active-chunks-per-dimension", parse=positive_int,
                                               help="chunks that may run at once in one dimension's queue")
    preferred_dataset_splits: int = setting(1, key="preferred-dataset-splits", parse=positive_int,
                                            help="chunks a collective is split into")
    all_reduce: tuple = setting(("ring",), key="all-reduce-implementation", parse=algorithm_list,
                                help="all-reduce algorithm per dimension")
    reduce_scatter: tuple = setting(("ring",), key="reduce-scatter-implementation", parse=algorithm_list,
                                    help="reduce-scatter algorithm per dimension")
    all_gather: tuple = setting(("ring",), key="all-gather-implementation", parse=algorithm_list,
                                help="all-gather algorithm per dimension")
    all_to_all: tuple = setting((), key="all-to-all-implementation", parse=algorithm_list,
                                help="all-to-all algorithm per dimension (default: direct on switch and "
                                     "fully-connected dimensions, ring on rings: by_dimension)")
    collective_optimization: str = setting("localBWAware", key="collective-optimization",
                                           parse=choice("baseline", "localBWAware"),
                                           help="baseline: full collective per dimension; localBWAware: "
                                                "reduce-scatter up, all-reduce on the last, all-gather down")
    local_mem_bw: float = setting(0.0, key="local-mem-bw", parse=lambda v: 0.0 if v == 0 else parse_bandwidth(v),
                                  help="local memory bandwidth (GB/s); when set, a reduction costs 3*bytes/bw")
    roofline_enabled: bool = setting(False, key="roofline-enabled", parse=lambda v: as_int(v, 0) != 0,
                                     help="Chakra traces: time compute nodes that give num_ops and tensor_size by a "
                                          "roofline of peak-perf and local-mem-bw (0 or 1)")
    peak_perf: float = setting(0.0, key="peak-perf", parse=lambda v: 0.0 if v == 0 else positive_float(v),
                               help="peak compute of an NPU (TFLOPS), for the roofline")
    boost_mode: int = setting(0, key="boost-mode", parse=lambda v: as_int(v, 0),
                              help="ASTRA-sim's boost mode; accepted for compatibility, must be 0")
    collective_accounting: str = setting("astra-sim", key="collective-accounting",
                                         parse=choice("astra-sim", "physical"),
                                         help="astra-sim: charge collectives as ASTRA-sim 2.x does, also where that is "
                                              "unphysical (README); physical: one NPU reduces one message at a time, "
                                              "each what it received, and a tree never reduces on the way down")
    phase_barrier: str = setting("npu", key="phase-barrier", parse=choice("npu", "all"),
                                 help="npu: an NPU moves a chunk to its next phase as soon as it has finished the "
                                      "phase (ASTRA-sim 2.x); all: only once every NPU of the collective has "
                                      "(ASTRA-sim v1, the default for its legacy text files)")
    direct_collective_window: int = setting(0, key="direct-collective-window", parse=lambda v: as_int(v, 0),
                                            help="messages a direct algorithm keeps in flight (0 = all)")
    queues_per_dimension: int = setting(1, key="queues-per-dimension", parse=positive_int,
                                        help="queues per dimension; chunk i uses queue i mod this, each with "
                                             "active-chunks-per-dimension slots")
    collective_simulation: str = setting("symmetric", key="collective-simulation",
                                         parse=choice("symmetric", "per-message"),
                                         help="symmetric: a collective every member issues alike runs on one "
                                              "representative NPU when the backend cannot tell the members apart "
                                              "and the algorithms treat all ranks alike (same results, "
                                              "docs/scale.md; the packet backend still sends every member's "
                                              "messages and compares their arrivals); "
                                              "per-message: every NPU runs every message (the reference)")
    intra_dimension_scheduling: str = setting("fifo", key="intra-dimension-scheduling",
                                              parse=choice(*INTRA_POLICIES),
                                              help="order of ready chunks of equal priority and issue order: "
                                                   "fifo, smallest-first, less-remaining-phases-first")
    inter_dimension_scheduling: str = setting("ascending", key="inter-dimension-scheduling",
                                              parse=choice(*INTER_POLICIES),
                                              help="order a chunk visits dimensions: ascending, round-robin, "
                                                   "or themis (least estimated load first)")

    def algorithms(self, kind: str) -> tuple:
        return {"all-reduce": self.all_reduce, "reduce-scatter": self.reduce_scatter,
                "all-gather": self.all_gather, "all-to-all": self.all_to_all}[kind]

    def as_table(self) -> dict:
        """The resolved config, with ASTRA-sim's key names, for summary.json."""
        from netsim.config import settings_of, toml_key

        return {toml_key(f): getattr(self, f.name) for f in settings_of(SystemConfig)}


def _read_legacy_text(path: Path) -> tuple[dict, Source]:
    """ASTRA-sim's legacy 'key: value' system file, with ASTRA-sim v1's behaviour where v1 has no key
    for it: chunks move between phases in step on every NPU, and local memory reduces at 500,000 GB/s
    (v1's analytical binary's fixed memory model)."""
    text = read_text(path)
    table: dict[str, Any] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.split("#", 1)[0].strip()
        if not stripped:
            continue
        if ":" not in stripped:
            raise ConfigError(f"{path}:{number}: expected 'key: value', got {stripped!r}")
        key, value = (part.strip() for part in stripped.split(":", 1))
        try:
            value = json.loads(value)
        except ValueError:  # not JSON (or an integer too long to read): kept as text, checked as the key's value
            pass
        if key in table:
            raise repeated_key(f"{path}:{number}", key)
        table[key] = value
    table.setdefault("phase-barrier", "all")
    table.setdefault("local-mem-bw", 500000)
    return table, Source(str(path), text)


# ASTRA-sim keys that netsim reads but that change nothing it models: traces and logs, and the LogGP
# shared-bus parameters, which both ASTRA-sim versions use only with model-shared-bus on (refused
# below). (roofline-enabled and peak-perf time Chakra traces' compute nodes: settings above.)
IGNORED_ASTRA_KEYS = {"trace-enabled", "replay-only", "track-local-mem",
                      "local-mem-trace-filename", "seprate-log", "gap-denominator", "local-reduction-delay",
                      "L", "o", "g", "G", "model-shared-bus"}


# netsim keys that an ASTRA-sim file may carry but ASTRA-sim does not apply: v1 stops on them, 2.x ignores them.
NETSIM_ONLY_KEYS = {"direct-collective-window": "set a window with the algorithm's name instead, e.g. direct4"}


def parse_system_table(table: dict, source: Source, default_name: str, astra_file: bool = False) -> SystemConfig:
    """Validate a system table; in an ASTRA-sim file (`astra_file`) netsim-only keys are ignored with a
    one-line warning, as ASTRA-sim would not apply them."""
    if table.get("model-shared-bus", 0) not in (0, "0", False):
        raise source.error("model-shared-bus", "ASTRA-sim's shared-bus (LogGP) memory model is not modelled; set it to 0")
    table = {k: v for k, v in table.items() if k not in IGNORED_ASTRA_KEYS}
    for key, hint in NETSIM_ONLY_KEYS.items():
        if astra_file and key in table and key not in source.overridden:
            del table[key]
            warnings.warn(f"{source.path}: {key} is not an ASTRA-sim key (ASTRA-sim v1 refuses the file, 2.x ignores "
                          f"the key); ignored as ASTRA-sim would: {hint}", NetsimWarning, stacklevel=2)
    custom = [k for k in table if k.endswith("-implementation-custom")]
    if custom:
        raise source.error(custom[0], "custom (Chakra) collective implementations are not supported; "
                                      "use one of the built-in algorithms")
    config = build(SystemConfig, table, source)
    if astra_file and not config.all_to_all:  # ASTRA-sim's files: ring when they name no all-to-all (as before)
        config = dataclasses.replace(config, all_to_all=("ring",))
    if config.boost_mode != 0:
        raise source.error("boost-mode", "boost mode is not modelled; set it to 0")
    if config.roofline_enabled and not (config.peak_perf > 0 and config.local_mem_bw > 0):
        raise source.error("roofline-enabled", "the roofline needs peak-perf (TFLOPS) and local-mem-bw (GB/s)")
    if not config.name:
        config = SystemConfig(**{**config.__dict__, "name": default_name})
    return config


def load_system(name_or_path: str | Path, overrides: list[tuple[list[str], Any]] = ()) -> SystemConfig:
    """Load a bundled system config by name (`default`) or a .toml / legacy .txt / 2.x .json file."""
    path = find_config("system config", name_or_path, "system.configs", SYSTEM_SUFFIXES)
    if path.suffix == ".toml":
        table, source = read_toml(path)
    elif path.suffix == ".json":
        table, source = read_json_object(path)
    else:
        table, source = _read_legacy_text(path)
    for key_path, value in overrides:
        apply_override(table, key_path, value)
        source.overridden.add(".".join(key_path))
    return parse_system_table(table, source, path.name.rsplit(".", 1)[0], astra_file=path.suffix != ".toml")


DIRECT_DIMENSIONS = ("switch", "fully-connected")  # every NPU one hop from every other: all-to-all goes direct


def by_dimension(config: SystemConfig, dimension_kinds: tuple) -> SystemConfig:
    """`config` with its all-to-all algorithms filled in when it names none: direct on a dimension whose
    NPUs are each one hop apart (a switch, fully-connected: a ring all-to-all there crosses the switch
    size - 1 times), ring on a ring. (ASTRA-sim files keep their own choice: parse_system_table.)"""
    if config.all_to_all:
        return config
    chosen = tuple("direct" if kind in DIRECT_DIMENSIONS else "ring" for kind in dimension_kinds)
    return dataclasses.replace(config, all_to_all=chosen if len(set(chosen)) > 1 else chosen[:1])


def check_algorithms(config: SystemConfig, sizes: tuple, where: str) -> None:
    """Every algorithm list matches the network's dimensions, names a known algorithm, and can run there."""
    from system.algorithms import ALGORITHMS, known, resolve

    for kind in ("all-reduce", "reduce-scatter", "all-gather", "all-to-all"):
        names = config.algorithms(kind)
        for name in names:
            if not known(name):
                raise ConfigError(f"{where}: {kind}-implementation: unknown algorithm '{name}'"
                                  f"{did_you_mean(name, ALGORITHMS)} (supported: {', '.join(ALGORITHMS)}, directN)")
        if len(names) not in (1, len(sizes)):
            raise ConfigError(f"{where}: {kind}-implementation lists {len(names)} algorithms "
                              f"({'_'.join(names)}) for a network of {len(sizes)} dimensions {list(sizes)}")
        for dim, size in enumerate(sizes):
            name = names[0] if len(names) == 1 else names[dim]
            algorithm = resolve(name)[0]
            group = size
            if algorithm.flat:
                group = 1
                for s in sizes:
                    group *= s
            if group > 1:
                try:
                    algorithm.check(name, kind, group)
                except ConfigError as exc:
                    raise ConfigError(f"{where}: {kind}-implementation on dimension {dim}: {exc}") from None
