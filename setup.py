"""Optional compiled build of the packet backend's hot path with mypyc (README, "Speed"):

    python -m pip install "mypy>=1.8" setuptools wheel
    NETSIM_COMPILE=1 python -m pip install --no-build-isolation .

compiles the modules below from the same Python source; without NETSIM_COMPILE the package is pure
Python, the reference (CI runs the packet-backend tests and a fingerprint on both builds)."""

import os

from setuptools import setup

COMPILED = ["netsim/garnet/clock.py", "netsim/garnet/crossbar.py", "netsim/garnet/input_unit.py",
            "netsim/garnet/output_unit.py", "netsim/garnet/router.py", "netsim/garnet/nic.py",
            "netsim/garnet/allocators/base.py", "netsim/garnet/allocators/garnet.py",
            "netsim/garnet/allocators/booksim.py"]

ext_modules = []
if os.environ.get("NETSIM_COMPILE") == "1":
    from mypyc.build import mypycify

    # type errors count in the compiled modules only; the rest is read for its types
    ext_modules = mypycify(["--follow-imports=silent", "--ignore-missing-imports", *COMPILED], opt_level="3")

setup(ext_modules=ext_modules)
