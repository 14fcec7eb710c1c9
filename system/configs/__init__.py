"""Bundled system configs, reachable by short name: `netsim run --system default`."""
