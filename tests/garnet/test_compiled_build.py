"""The two builds of the packet core (netsim/garnet/core.py): `pip install` compiles the modules of
core.CORE with Cython; NETSIM_PURE_CORE=1 runs their source. CI runs the suite on the compiled build
with NETSIM_EXPECT_COMPILED=1 (then every core module must be the compiled one, or that run would
test the source a second time and prove nothing) and the packet-backend tests on the source."""

import ast
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from netsim.garnet import core

ROOT = Path(__file__).resolve().parents[2]
COMPILED = tuple(importlib.machinery.EXTENSION_SUFFIXES)


def test_the_build_compiles_the_modules_core_lists():
    """setup.py reads core.CORE (it cannot import netsim): its reading names every core module's file."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    reader = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "core_modules")
    namespace = {"ast": ast, "HERE": ROOT}
    exec(compile(ast.Module([reader], []), "setup.py", "exec"), namespace)
    files = namespace["core_modules"]()
    assert len(files) == len(core.CORE) and "netsim/garnet/allocators/garnet.py" in files
    assert all((ROOT / path).exists() for path in files), files


def loaded_from(env: dict) -> dict:
    """core.build and the file of every core module, in a fresh interpreter with `env`."""
    code = ("import json, importlib, netsim.garnet.core as c\n"
            "files = {m: importlib.import_module('netsim.garnet.' + m).__file__ for m in c.CORE}\n"
            "print(json.dumps({'build': c.build, 'files': files}))")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_netsim_pure_core_runs_the_source():
    loaded = loaded_from({"NETSIM_PURE_CORE": "1"})
    assert loaded["build"] == "pure"
    assert all(path.endswith(".py") for path in loaded["files"].values()), loaded["files"]


@pytest.mark.skipif(os.environ.get("NETSIM_EXPECT_COMPILED") != "1", reason="no compiled build expected here")
def test_every_core_module_is_the_compiled_one():
    loaded = loaded_from({"NETSIM_PURE_CORE": "0"})
    assert loaded["build"] == "compiled"
    assert all(path.endswith(COMPILED) for path in loaded["files"].values()), loaded["files"]


def test_version_says_which_core_runs():
    done = subprocess.run([sys.executable, "-m", "netsim.app.cli", "--version"], env={**os.environ, "NETSIM_PURE_CORE": "1"},
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "packet core: pure Python: NETSIM_PURE_CORE=1" in done.stdout
