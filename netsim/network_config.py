"""The network config: which topology, which backend, and the packet backend's `[garnet]` table.

Read from our TOML, or from ASTRA-sim's own files (`netsim.astra_formats`), then `--set`
overrides are applied to the table before it is validated, so an override is checked exactly
like a value written in the file.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from netsim.backends import BACKENDS
from netsim.budget import Budget
from netsim.bundled import find_config
from netsim.config import (Source, apply_override, as_str, as_table, build, choice, overrides_label, read_toml,
                           setting)
from netsim.errors import ConfigError
from netsim.garnet.config import GarnetConfig
from netsim.topology import TOPOLOGY_KINDS, LevelSpec, Topology

BACKEND_NAMES = tuple(BACKENDS)
NETWORK_SUFFIXES = (".toml", ".json", ".yml", ".yaml", ".txt")
CROSS_DIMENSION_RULES = ("route", "highest-dimension", "lowest-dimension")


@dataclass(frozen=True)
class NetworkFile:
    """The top level of a network TOML."""

    topology: dict = setting(parse=as_table, help="the [topology] table (kind = torus | mesh | switch | hierarchical | fat-tree | rail | dragonfly)")
    name: str = setting("", parse=as_str, help="short name used in reports (default: the file's stem)")
    description: str = setting("", parse=as_str, help="one line on what this network models")
    backend: str = setting("analytical", parse=choice(*BACKEND_NAMES), help="the network backend: " + " | ".join(BACKEND_NAMES))
    garnet: dict = setting(None, parse=as_table, help="the [garnet] table of packet-backend parameters")
    cross_dimension_messages: str = setting(
        "route", parse=choice(*CROSS_DIMENSION_RULES),
        help="congestion-unaware cost of a message between NPUs that differ in several dimensions: route "
             "(every link of its route), highest-dimension (only the highest dimension it crosses, as ASTRA-sim "
             "v1; set for its JSON files) or lowest-dimension (only the lowest, as ASTRA-sim 2.x; set for its YAML)")
    route_ties: str = setting("random", parse=choice("random", "positive"),
                              help="a route to an even ring's antipode (as near either way) goes a way drawn at random "
                                   "per message from the run's seed (+ and - links share the load), or always the "
                                   "positive way (ASTRA-sim's rule; set for its network files); every backend alike")


@dataclass(frozen=True)
class NetworkConfig:
    """A validated network: build its Topology with `build_topology()`."""

    name: str
    backend: str
    cross_dimension_messages: str
    route_ties: str
    topology_kind: str
    topology_spec: Any
    garnet: GarnetConfig
    path: str
    table: dict = field(compare=False)

    @property
    def npus(self) -> int:
        """The topology's NPUs, from its spec (nothing built)."""
        return TOPOLOGY_KINDS[self.topology_kind].npus(self.topology_spec)

    def build_topology(self) -> Topology:
        """The topology's graph, after checking it fits in memory (netsim.budget: a 4-billion-NPU torus
        is refused before any of it is built); built once and kept: a run's header, budget check,
        network and summary each ask for it (a 16x16x16 torus took 0.25 s a build). A Topology's
        caches hold only what its routes are, so runs may share it."""
        return self._topology

    @cached_property
    def _topology(self) -> Topology:
        Budget(self.npus, 0, topology_only=True).check(f"the topology of {self.name}")
        try:
            topology = TOPOLOGY_KINDS[self.topology_kind].build(self.topology_spec, self.name)
        except ValueError as exc:
            raise ConfigError(f"{self.path}: [topology]: {exc}") from None
        topology.tie_rule(self.route_ties)
        return topology


def parse_network_table(table: dict, source: Source, default_name: str) -> NetworkConfig:
    """Validate a network table (from TOML or converted from an ASTRA-sim file)."""
    top = build(NetworkFile, table, source)
    topology_table = dict(top.topology)
    kind = topology_table.pop("kind", None)
    if not isinstance(kind, str) or kind not in TOPOLOGY_KINDS:
        hint = choice(*TOPOLOGY_KINDS)
        try:
            hint(kind)
        except ValueError as exc:
            raise source.error("topology.kind", str(exc)) from None
    spec_cls = TOPOLOGY_KINDS[kind].spec
    if kind == "hierarchical":
        levels = topology_table.get("dims")
        if not isinstance(levels, list) or not levels:
            raise source.error("topology.dims", "expected a list of [[topology.dims]] tables")
        topology_table["dims"] = tuple(build(LevelSpec, level, source, f"topology.dims.{i}.")
                                       for i, level in enumerate(levels))
    spec = build(spec_cls, topology_table, source, "topology.")
    garnet = build(GarnetConfig, _garnet_table(top.garnet or {}, kind, source), source, "garnet.")
    return NetworkConfig(top.name or default_name, top.backend, top.cross_dimension_messages, top.route_ties, kind,
                         spec, garnet, source.path, table)


def _garnet_table(table: dict, kind: str, source: Source) -> dict:
    """The [garnet] table with the topology kind's default routing unit where it is not `dor` (a
    dragonfly's minimal routing needs its own VC classes); a unit that is not deadlock-free on the
    kind is an error."""
    routings = TOPOLOGY_KINDS[kind].routings
    chosen = table.get("routing")
    if chosen is None:
        return table if routings[0] == "dor" else {**table, "routing": routings[0]}
    if str(chosen).lower() not in routings:
        names = f"{', '.join(routings[:-1])} or {routings[-1]}" if len(routings) > 1 else routings[0]
        raise source.error("garnet.routing", f"expected {names} on a {kind} (routing {chosen!r} is not "
                                             "deadlock-free there)")
    return table


def read_network_table(path: Path) -> tuple[dict, Source]:
    """Read any supported network file into our table form."""
    if path.suffix == ".toml":
        return read_toml(path)
    from netsim import astra_formats

    return astra_formats.read_network_file(path)


def load_network(name_or_path: str | Path, overrides: list[tuple[list[str], Any]] = (),
                 backend: str | None = None) -> NetworkConfig:
    """Load a bundled network by name (`torus-4x4`) or a file, apply overrides, validate."""

    path = find_config("network", name_or_path, "topologies", NETWORK_SUFFIXES)
    table, source = read_network_table(path)
    for key_path, value in overrides:
        apply_override(table, key_path, value)
        source.overridden.add(".".join(key_path))
    if backend is not None:
        chosen = [value for key_path, value in overrides if list(key_path) == ["backend"]]
        if chosen and chosen[-1] != backend:
            raise ConfigError(f"--backend {backend} and --set backend={chosen[-1]} disagree: give the backend once")
        table["backend"] = backend
    stem = path.name.rsplit(".", 1)[0]
    config = parse_network_table(table, source, stem)
    # a network changed by --set is named by what changed (a --set name=... names it outright)
    label = overrides_label([(key_path, value) for key_path, value in overrides if list(key_path) != ["name"]])
    return dataclasses.replace(config, name=config.name + label) if label else config
