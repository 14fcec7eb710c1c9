"""Garnet-like packet backend: NICs, routers with VCs and credits, links, routing, statistics."""
