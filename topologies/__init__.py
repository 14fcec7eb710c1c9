"""Ready network configs (TOML), reachable by short name: `netsim run --network torus-4x4`."""
