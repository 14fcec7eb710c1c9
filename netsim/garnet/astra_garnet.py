"""Read ASTRA-sim's Garnet network config (`key: value` lines, e.g. sample_torus.txt).

Mapping (ASTRA-sim 1.x Garnet, 1 GHz clock, so cycles = ns):
- dimensions: local = num-npus / num-packages NPUs per package, then the packages in
  num-packages / package-rows columns (horizontal) and package-rows rows (vertical);
  Torus3D makes every dimension a ring, NV_Switch makes the local dimension fully-connected
  (AllToAll) and the package dimensions switches;
- flit-width and the link widths are in bits (2048 -> 256-byte flits, 256 -> 32 bytes/cycle);
  packet sizes are in bytes; link width x efficiency gives the bandwidth;
- local-/package-link-latency and router-latency are cycles; vcs-per-vnet and buffers-per-vc map to
  vcs and buffer_flits; *-rings counts are parallel links (informational, as ASTRA-sim's links-count).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from netsim.config import Source, did_you_mean, read_text, repeated_key
from netsim.errors import ConfigError

NUMBER_KEYS = ("num-npus", "num-packages", "package-rows", "local-rings", "vertical-rings", "horizontal-rings",
               "links-per-tile", "flit-width", "local-packet-size", "package-packet-size", "tile-link-width",
               "package-link-width", "vcs-per-vnet", "router-latency", "local-link-latency",
               "package-link-latency", "buffers-per-vc", "local-link-efficiency", "package-link-efficiency")
WHOLE_KEYS = ("num-npus", "num-packages", "package-rows", "local-rings", "vertical-rings", "horizontal-rings",
              "links-per-tile", "flit-width", "local-packet-size", "package-packet-size", "tile-link-width",
              "package-link-width", "vcs-per-vnet", "router-latency", "buffers-per-vc")  # counts, bits, bytes, cycles
TEXT_KEYS = ("topology", "routing-algorithm")
TOPOLOGIES = ("Torus3D", "NV_Switch")


def _read(path: Path) -> tuple[dict, Source]:
    text = read_text(path)
    source = Source(str(path), text)
    values: dict = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.match(r"^([A-Za-z0-9_-]+)\s*:\s*(\S+)\s*$", line)
        if not match:
            raise ConfigError(f"{path}:{number}: expected 'key: value', got {line!r}")
        key, value = match.groups()
        if key in values:
            raise repeated_key(f"{path}:{number}", key)
        if key in TEXT_KEYS:
            values[key] = value
        elif key in NUMBER_KEYS:
            try:
                values[key] = float(value)
            except ValueError:
                raise source.error(key, f"expected a number, got {value!r}") from None
            if not math.isfinite(values[key]):
                raise source.error(key, f"expected a finite number, got {value}")
            if key in WHOLE_KEYS:
                if not values[key].is_integer() or values[key] < 1:
                    raise source.error(key, f"expected a whole number of at least 1, got {value}")
                values[key] = int(values[key])
        else:
            raise source.error(key, "unknown key" + did_you_mean(key, NUMBER_KEYS + TEXT_KEYS))
    return values, source


def read_garnet_file(path: Path) -> tuple[dict, Source]:
    """ASTRA-sim Garnet .txt -> netsim network table (hierarchical topology + [garnet] table)."""
    values, source = _read(Path(path))

    def need(key: str) -> float:
        if key not in values:
            raise source.error(key, "missing")
        return values[key]

    topology = values.get("topology", "Torus3D")
    if topology not in TOPOLOGIES:
        raise source.error("topology", f"expected one of {', '.join(TOPOLOGIES)}, got {topology!r}")
    npus, packages = need("num-npus"), need("num-packages")
    rows = values.get("package-rows", 1)
    if packages < 1 or rows < 1 or npus % packages or packages % rows:
        raise source.error("num-packages", f"num-npus ({npus}) must be a multiple of num-packages ({packages}), "
                                           f"and that of package-rows ({rows})")
    if need("flit-width") % 8:
        raise source.error("flit-width", f"expected whole bytes, in bits (a multiple of 8), got {values['flit-width']}")
    flit_bytes = values["flit-width"] // 8
    local_bw = values.get("tile-link-width", need("flit-width")) / 8 * values.get("local-link-efficiency", 1.0)
    package_bw = values.get("package-link-width", need("flit-width")) / 8 * values.get("package-link-efficiency", 1.0)
    local_kind, package_kind = ("ring", "ring") if topology == "Torus3D" else ("fully-connected", "switch")
    sizes = [("local", npus // packages, local_kind, local_bw, values.get("local-link-latency", 1.0), "local-rings"),
             ("horizontal", packages // rows, package_kind, package_bw, values.get("package-link-latency", 1.0),
              "horizontal-rings"),
             ("vertical", rows, package_kind, package_bw, values.get("package-link-latency", 1.0), "vertical-rings")]
    levels = [{"type": kind, "size": size, "bandwidth": bw, "latency": latency, "links": values.get(rings, 1)}
              for _name, size, kind, bw, latency, rings in sizes if size > 1]
    if not levels:
        raise source.error("num-npus", f"{npus} NPU(s) in {packages} package(s) make no network")
    garnet = {"clock_ghz": 1.0, "flit_bytes": flit_bytes,
              "packet_bytes": values.get("package-packet-size", values.get("local-packet-size", 4096)),
              "vcs": values.get("vcs-per-vnet", 4), "router_latency": values.get("router-latency", 1)}
    if "buffers-per-vc" in values:
        garnet["buffer_flits"] = values["buffers-per-vc"]
    return {"name": Path(path).stem, "description": f"ASTRA-sim Garnet config ({topology})", "backend": "garnet",
            "topology": {"kind": "hierarchical", "dims": levels}, "garnet": garnet}, source
