"""The optional compiled build (setup.py, mypyc): CI builds it in place and runs the packet-backend
tests on it with NETSIM_EXPECT_COMPILED=1; then every module setup.py compiles must load compiled,
or those runs would test the pure-Python source a second time and prove nothing."""

import ast
import importlib
import importlib.util
import os
from pathlib import Path

import pytest

SETUP = Path(__file__).resolve().parents[1] / "setup.py"


def compiled_modules() -> list[str]:
    """Module names of setup.py's COMPILED list."""
    for node in ast.parse(SETUP.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "COMPILED":
            return [path[:-3].replace("/", ".") for path in ast.literal_eval(node.value)]
    raise AssertionError("setup.py has no COMPILED list")


def test_setup_compiles_the_packet_backends_hot_modules():
    modules = compiled_modules()
    assert "netsim.garnet.allocators.garnet" in modules and "netsim.garnet.output_unit" in modules
    for name in modules:
        assert importlib.util.find_spec(name) is not None, name


@pytest.mark.skipif(os.environ.get("NETSIM_EXPECT_COMPILED") != "1", reason="pure-Python run (the reference)")
def test_every_listed_module_is_the_compiled_one():
    for name in compiled_modules():
        origin = importlib.import_module(name).__file__
        assert origin.endswith(".so"), f"{name} loaded from {origin}"
