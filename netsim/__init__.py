"""netsim: packet-level network simulation for distributed deep-learning training.

The simulations as Python functions (netsim.simulations; imported on first use, so `import netsim`
stays light):

    import netsim
    result = netsim.collective("all-reduce", "64MiB", network="ring-16", algorithm="direct")
    result.summary["busbw_GBps"], result.tables["links"]    # summary.json as a dict, CSVs as DataFrames
    result = netsim.run(workload="Resnet50_DataParallel", backend="garnet", set={"garnet.vcs": 4})
    result = netsim.synth("uniform", rate=0.3, network="torus-8x8-noc")
    result = netsim.load("netsim-out/Resnet50_DataParallel-torus-4x4")   # an output folder read back

The network layer (this package) never imports the `system` or `workload` packages;
`netsim.runner`, `netsim.cli` and `netsim.simulations` are the only modules that wire all three
layers together.
"""

SIMULATIONS = ("run", "collective", "synth", "load")
__all__ = [*SIMULATIONS, "ConfigError", "__version__"]


def __getattr__(name: str):
    """netsim.run, .collective, .synth, .load, .ConfigError and .__version__, looked up on first use."""
    if name in SIMULATIONS:
        from netsim import simulations

        return getattr(simulations, name)
    if name == "ConfigError":  # what every bad input raises, with its one-line message
        from netsim.errors import ConfigError

        return ConfigError
    if name == "__version__":
        from importlib.metadata import version

        return version("netsim")
    raise AttributeError(f"module 'netsim' has no attribute {name!r}")
