"""netsim: packet-level network simulation for distributed deep-learning training.

The network layer (this package) never imports the `system` or `workload` packages;
`netsim.runner` and `netsim.cli` are the only modules that wire all three layers together.
"""

__version__ = "0.1.0"
