"""Read ASTRA-sim's network files into netsim's network table, with ASTRA-sim's units.

- 2.x YAML (`topology: [Ring, Switch]`, `npus_count`, `bandwidth`, `latency`): bandwidth is
  written in GB/s but ASTRA-sim converts it as GiB/s (bw * 2^30 / 1e9 bytes/ns); latency in ns.
- Legacy analytical JSON (`topologies-per-dim`, `units-count`, `link-bandwidth`, ...): as ASTRA-sim
  v1's analytical backend reads it, a link's bandwidth is `link-bandwidth` converted as GiB/s
  times a per-dimension scalar from `links-count` (`links_scalar`); latencies in ns.
Both become a hierarchical topology (one level per dimension). ASTRA-sim's congestion-unaware
backends cost a message between NPUs that differ in several dimensions as if it crossed only one
of them (v1 the highest, 2.x the lowest): the tables say so (`cross_dimension_messages`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from pathlib import Path

from netsim.config import TOO_DEEP, TOO_LONG, Source, did_you_mean, read_json_object, read_text, repeated_key
from netsim.errors import ConfigError
from netsim.units import LINK_BANDWIDTH_RANGE_GBPS, MAX_TIME_NS

ASTRA_LEVEL_KINDS = {"ring": "ring", "fullyconnected": "fully-connected", "switch": "switch"}
GIB_PER_GB = 2**30 / 1e9


def _level_kind(value, source: Source, key: str) -> str:
    kind = ASTRA_LEVEL_KINDS.get(str(value).replace("_", "").replace("-", "").lower())
    if kind is None:
        raise source.error(key, f"expected Ring, FullyConnected or Switch, got {value!r}")
    return kind


# what a per-dimension list may hold: (test, what it expects)
WHOLE = (lambda x: float(x).is_integer() and x >= 1, "whole numbers of at least 1")
BANDWIDTHS = (lambda x: LINK_BANDWIDTH_RANGE_GBPS[0] <= x <= LINK_BANDWIDTH_RANGE_GBPS[1],
              f"bandwidths from {LINK_BANDWIDTH_RANGE_GBPS[0]:g} to {LINK_BANDWIDTH_RANGE_GBPS[1]:g} GB/s")
LATENCIES = (lambda x: 0 <= x <= MAX_TIME_NS, f"latencies from 0 to {MAX_TIME_NS:g} ns")


def _per_dim_list(data: dict, key: str, count: int, source: Source, rule: tuple, default=None) -> list:
    """`key`'s list of one number per dimension, each passing `rule` (checked here, so an error names
    the file's own key and value, not what netsim converts them to)."""
    value = data.get(key, default)
    if value is None:
        raise source.error(key, f"missing; expected a list with one value per dimension ({count})")
    if not isinstance(value, list) or len(value) != count:
        raise source.error(key, f"expected a list with one value per dimension ({count}), got {value!r}")
    test, expected = rule
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise source.error(key, f"expected {expected}, got {item!r}")
        if not math.isfinite(item):
            raise source.error(key, f"{item!r} is not a finite number")
        if not test(item):
            raise source.error(key, f"expected {expected}, got {item!r}")
    return value


def _unique_key_loader():
    """A YAML safe loader that refuses a key given twice in one mapping (PyYAML keeps the last)."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _value in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, Hashable) and key in seen:
                    raise repeated_key(f"{self.name}:{key_node.start_mark.line + 1}", key)
                seen.add(key)
            return super().construct_mapping(node, deep)

    return UniqueKeyLoader


def read_astra_yaml(path: Path) -> tuple[dict, Source]:
    """ASTRA-sim 2.x network YAML -> network table."""
    import yaml

    text = read_text(path)
    source = Source(str(path), text)
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):  # *name: a node repeated, however large (an "alias bomb")
                raise ConfigError(f"{path}:{event.start_mark.line + 1}: YAML alias *{event.anchor:.40}: network "
                                  f"files are read without aliases (ASTRA-sim's use none); write the values out")
        loader = _unique_key_loader()(text)
        loader.name = str(path)
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {str(exc).splitlines()[0]}") from None
    except ValueError:  # Python's limit on the digits of an integer read from text
        raise ConfigError(f"{path}: {TOO_LONG}") from None
    except RecursionError:
        raise ConfigError(f"{path}: {TOO_DEEP}") from None
    if not isinstance(data, dict) or "topology" not in data:
        raise source.error("topology", "missing; expected e.g. 'topology: [ Ring ]'")
    kinds = data["topology"]
    if not isinstance(kinds, list) or not kinds:
        raise source.error("topology", f"expected a list like [ Ring, Switch ], got {kinds!r}")
    for key in data:
        if key not in ("topology", "npus_count", "bandwidth", "latency"):
            raise source.error(key, "unknown key (expected topology, npus_count, bandwidth, latency)")
    count = len(kinds)
    sizes = _per_dim_list(data, "npus_count", count, source, WHOLE)
    bandwidths = _per_dim_list(data, "bandwidth", count, source, BANDWIDTHS)
    latencies = _per_dim_list(data, "latency", count, source, LATENCIES)
    levels = [{"type": _level_kind(k, source, "topology"), "size": int(n), "bandwidth": bw * GIB_PER_GB,
               "latency": float(lat)} for k, n, bw, lat in zip(kinds, sizes, bandwidths, latencies)]
    return {"name": path.stem, "description": "ASTRA-sim 2.x network YAML", "cross_dimension_messages": "lowest-dimension",
            "route_ties": "positive", "topology": {"kind": "hierarchical", "dims": levels}}, source


LEGACY_JSON_KEYS = {"topology-name", "topologies-per-dim", "dimension-type", "dimensions-count", "units-count",
                    "links-count", "link-latency", "link-bandwidth", "nic-latency", "router-latency",
                    "hbm-latency", "hbm-bandwidth", "hbm-scale"}


def links_scalar(kind: str, links: int, size: int) -> int:
    """ASTRA-sim v1's bandwidth multiplier for a dimension with `links` links per NPU: a ring uses its
    links in pairs, one per direction (an odd count loses one), a fully-connected group spreads them
    over its size - 1 peers (whole links per peer), a switch has them all."""
    if kind == "ring":
        return links - links % 2
    if kind == "fully-connected":
        return links // max(1, size - 1)
    return links


def read_astra_json(path: Path) -> tuple[dict, Source]:
    """ASTRA-sim legacy analytical JSON -> network table (HBM keys are read and ignored: no memory model)."""
    data, source = read_json_object(path)
    for key in data:
        if key not in LEGACY_JSON_KEYS:
            raise source.error(key, "unknown key" + did_you_mean(key, LEGACY_JSON_KEYS))
    kinds = data.get("topologies-per-dim")
    if not isinstance(kinds, list) or not kinds:
        raise source.error("topologies-per-dim", "missing; expected e.g. [\"Ring\", \"Switch\"]")
    count = len(kinds)
    dimensions = data.get("dimensions-count", count)
    if type(dimensions) is not int:
        raise source.error("dimensions-count", f"expected a whole number, got {dimensions!r}")
    if dimensions != count:
        raise source.error("dimensions-count", f"says {dimensions} but topologies-per-dim lists {count}")
    sizes = _per_dim_list(data, "units-count", count, source, WHOLE)
    bandwidths = _per_dim_list(data, "link-bandwidth", count, source, BANDWIDTHS)
    latencies = _per_dim_list(data, "link-latency", count, source, LATENCIES)
    nics = _per_dim_list(data, "nic-latency", count, source, LATENCIES, [0] * count)
    routers = _per_dim_list(data, "router-latency", count, source, LATENCIES, [0] * count)
    links = _per_dim_list(data, "links-count", count, source, WHOLE, [1] * count)
    levels = []
    for d, (k, n, bw, lat, nic, router, link) in enumerate(zip(kinds, sizes, bandwidths, latencies, nics, routers,
                                                                 links)):
        kind = _level_kind(k, source, "topologies-per-dim")
        scalar = links_scalar(kind, int(link), int(n))
        if scalar <= 0:
            given = f"has {link} link{'' if link == 1 else 's'}" if "links-count" in data else "has 1 link (links-count is missing)"
            raise source.error("links-count", f"dimension {d} ({k}, {n} NPUs) {given}, which gives it no "
                                              f"bandwidth as ASTRA-sim v1 counts them (a ring needs 2 per NPU, a "
                                              f"fully-connected group one per peer)")
        levels.append({"type": kind, "size": int(n), "bandwidth": float(bw) * GIB_PER_GB * scalar,
                       "latency": float(lat), "nic_latency": float(nic), "router_latency": float(router),
                       "links": int(link)})
    return {"name": path.stem, "description": "ASTRA-sim legacy analytical JSON",
            "cross_dimension_messages": "highest-dimension", "route_ties": "positive",
            "topology": {"kind": "hierarchical", "dims": levels}}, source


def read_network_file(path: Path) -> tuple[dict, Source]:
    """Dispatch on the file's suffix."""
    if not path.is_file():
        raise ConfigError(f"{path}: file not found")
    if path.suffix in (".yml", ".yaml"):
        return read_astra_yaml(path)
    if path.suffix == ".json":
        return read_astra_json(path)
    if path.suffix == ".txt":
        from netsim.garnet import astra_garnet

        return astra_garnet.read_garnet_file(path)
    raise ConfigError(f"{path}: unknown network file type (expected .toml, .json, .yml or .txt)")
