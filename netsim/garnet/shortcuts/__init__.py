"""The packet backend's exact shortcuts: ways to reach the same statistics with less simulation.

fastforward (skip a whole network's repeated steady state), partitions (skip it per group of
ports that do not interact), quotient (a symmetric run on one period of a torus), mirrored (one
NPU's messages sent as every copy's). Each gives what the full simulation gives, bit for bit."""
