"""The application shell: the `netsim` command, the Python API and what they share (the run plan,
the runner that wires the workload, system and network layers, sweeps, progress, outputs,
reports and plots). Nothing below this package imports it."""
