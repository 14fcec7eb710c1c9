"""netsim: packet-level network simulation for distributed deep-learning training.

The simulations as Python functions (netsim.app.simulations; imported on first use, so `import netsim`
stays light):

    import netsim
    result = netsim.collective("all-reduce", "64MiB", network="ring-16", algorithm="direct")
    result.summary["busbw_GBps"], result.tables["links"]    # summary.json as a dict, CSVs as DataFrames
    result = netsim.run(workload="Resnet50_DataParallel", backend="garnet", set={"garnet.vcs": 4})
    result = netsim.synth("uniform", rate=0.3, network="torus-8x8-noc")
    result = netsim.load("netsim-out/Resnet50_DataParallel-torus-4x4")   # an output folder read back

The package holds three layers (docs/contributing.md): the shared base (errors, units, config,
files, ...), the network layer (api, backends, topology, the backends), and the application shell in
`netsim.app`, the only part that wires the workload, system and network layers together. Nothing
imports upward: app -> workload -> system -> network -> base.
"""

import importlib.abc
import sys

SIMULATIONS = ("run", "collective", "synth", "load")
__all__ = [*SIMULATIONS, "ConfigError", "__version__"]
# modules of the shell that moved into netsim.app (and the packet backend's settings), by old name
MOVED = {**{f"netsim.{name}": f"netsim.app.{name}" for name in (
    "cli", "sweep", "runner", "simulations", "progress", "outputs", "plots", "report", "timeseries", "traffic",
    "saturation", "config_keys")}, "netsim.packet_settings": "netsim.garnet.plan"}


def __getattr__(name: str):
    """netsim.run, .collective, .synth, .load, .ConfigError and .__version__, looked up on first use."""
    if name in SIMULATIONS:
        from netsim.app import simulations

        return getattr(simulations, name)
    if name == "ConfigError":  # what every bad input raises, with its one-line message
        from netsim.errors import ConfigError

        return ConfigError
    if name == "__version__":
        from importlib.metadata import version

        return version("netsim")
    raise AttributeError(f"module 'netsim' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What tab completion offers: the simulations and the names above beside the module's own."""
    return sorted({*globals(), *__all__})


class _MovedModules(importlib.abc.MetaPathFinder):
    """An import of a module by its old name fails saying where it went (netsim.runner -> netsim.app.runner)."""

    def find_spec(self, name, path, target=None):
        if name in MOVED:
            raise ModuleNotFoundError(f"{name} is now {MOVED[name]}: import it from there", name=name)
        return None


sys.meta_path.append(_MovedModules())
