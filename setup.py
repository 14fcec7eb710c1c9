"""Build of netsim: the packet backend's per-cycle core (the modules netsim/garnet/core.py lists in
CORE) is compiled with Cython from the same .py files that run uncompiled as the reference; the C
types are in the .pxd files beside them (Cython's "augmenting .pxd", pure-Python mode).
There, the methods returning C integers are `except? RAISED` (-1, core.pxd: a caller checks for an
exception only when -1 comes back, not after every call), setters that cannot fail are `noexcept`,
and the classes nothing subclasses are `@cython.final` (their methods are called directly, not
through a table, and may be inlined: 2-5% of bench_compare's flit runs).

`pip install .` and `pip install -e .` compile it where a C compiler and Python's headers exist;
where they do not, each extension is optional: the build goes on and installs pure Python, and the
packet backend says so in one line when it starts. NETSIM_PURE_BUILD=1 skips compiling;
NETSIM_PURE_CORE=1 at run time runs the source even where the compiled core exists (core.py)."""

import ast
import os
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def core_modules() -> list[str]:
    """The source files of core.py's CORE (read, not imported: the build has none of netsim's dependencies)."""
    for node in ast.parse((HERE / "netsim/garnet/core.py").read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "CORE":
            return [f"netsim/garnet/{module.replace('.', '/')}.py" for module in ast.literal_eval(node.value)]
    raise SystemExit("netsim/garnet/core.py has no CORE list")


def core_extensions() -> list:
    """The compiled core's extensions (none under NETSIM_PURE_BUILD=1 or without Cython)."""
    if os.environ.get("NETSIM_PURE_BUILD") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:  # (Cython is a build requirement: only a build without isolation gets here)
        print("netsim: Cython is not installed: the packet core stays pure Python")
        return []
    extensions = cythonize(core_modules(), quiet=True, nthreads=os.cpu_count() or 1, compiler_directives={
        "language_level": 3,
        "annotation_typing": False,  # the .py files' hints stay Python's; the C types are in the .pxd files
        "infer_types": True,  # locals take the C types of what they are assigned (cycles fit in 64 bits)
        # no index checks in C (about 8% of an 8x8 run at load 0.3): the uncompiled source, which CI
        # runs too, raises on an index past the end; a negative one it would wrap silently, so the
        # core never indexes with a negative number (VC and port indices are checked >= 0 first)
        "boundscheck": False, "wraparound": False,
        # nor a check that a typed array attribute is set before each read (every unit and allocator
        # sets its arrays in __init__; 2.5% of an 8x8 run's instructions at load 0.3)
        "initializedcheck": False,
    })
    for extension in extensions:
        extension.optional = True  # no C compiler or headers: install pure Python instead of failing
    return extensions


setup(ext_modules=core_extensions(), options={"build_ext": {"parallel": os.cpu_count() or 1}})
