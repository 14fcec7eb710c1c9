"""Garnet-like packet backend: NICs, routers with VCs and credits, links, routing, statistics."""

from netsim.garnet import core

core.install()  # the compiled core or its source (core.py), before any core module is imported
