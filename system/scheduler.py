"""Per-NPU, per-dimension chunk queues: at most `active-chunks-per-dimension` chunks run at once.

Waiting chunks are served by `scheduling-policy`: FIFO serves the earliest-issued collective
first, LIFO the latest (ASTRA-sim's default for training, which favours the layer the next
forward pass needs first). Ties keep arrival order, so runs are deterministic.
"""

from __future__ import annotations

import simpy


class DimensionQueues:
    """One priority queue per dimension for one NPU."""

    def __init__(self, env: simpy.Environment, dims: int, active_chunks: int, policy: str):
        self.queues = [simpy.PriorityResource(env, capacity=active_chunks) for _ in range(dims)]
        self.sign = 1 if policy == "FIFO" else -1

    def request(self, dim: int, collective_seq: int) -> simpy.resources.resource.PriorityRequest:
        """A request to run in `dim`; yield it to wait, then release it with `release`."""
        return self.queues[dim].request(priority=self.sign * collective_seq)

    def release(self, dim: int, request) -> None:
        self.queues[dim].release(request)
