"""Synthetic traffic's packet generator (netsim.app.traffic): one per NPU, stepped by the cycle clock.

A packet starts in a cycle with probability p (a Bernoulli process), drawn as geometric gaps from
the NPU's own random generator; each packet is a message of its own to a destination the traffic
pattern draws (or a fixed one, for permutations), sent through the network's front door
(sender.py). Part of the compiled core: it runs once per packet, and so does the uniform pattern's
draw (`uniform_destination`).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from netsim.garnet.clock import Component


def uniform_destination(npus: int, src: int, rng, others: bool) -> int:
    """Any of `npus` NPUs but `src` (or any, `src` included, unless `others`), from one draw of `rng`."""
    draw = rng.random()  # (randrange: 1.7x the time)
    if not others:
        return int(draw * npus)
    dst = int(draw * (npus - 1))
    return dst + 1 if dst >= src else dst


class TrafficSource(Component):
    """One NPU's Bernoulli packet generator; counts the packets it creates in the measured window."""

    __slots__ = ("clock", "sender", "npu", "rng", "log_q", "pattern", "topology", "others", "fixed_dst",
                 "packet_bytes", "delay", "warmup", "end", "generated")

    def __init__(self, clock, sender, npu: int, rng, log_q: float, pattern: Callable, topology: Any, others: bool,
                 fixed_dst: int, packet_bytes: int, delay: int, warmup: int, end: int):
        super().__init__()
        self.clock = clock
        self.sender = sender
        self.npu = npu
        self.rng = rng  # random.Random of this NPU (gaps and the pattern's draws)
        self.log_q = log_q  # log(1 - p), for geometric gaps; 0.0: a packet every cycle (p = 1)
        self.pattern = pattern  # pattern(topology, npu, rng, others) -> destination (None: uniform, drawn here)
        self.topology = topology
        self.others = others  # random patterns draw among the other NPUs only
        self.fixed_dst = fixed_dst  # a permutation's destination (-1: drawn per packet by `pattern`)
        self.packet_bytes = packet_bytes
        self.delay = delay  # cycles a packet waits at its source before its NIC may inject it
        self.warmup = warmup  # the measured window: packets created in cycles [warmup, end)
        self.end = end
        self.generated = 0  # packets created in the measured window

    def gap(self) -> int:
        """Cycles to the next packet: geometric, i.e. one Bernoulli(p) trial per cycle."""
        if self.log_q == 0.0:
            return 1
        return int(math.log(1.0 - self.rng.random()) / self.log_q) + 1

    def start(self) -> None:
        """Schedule the first packet (a permutation's fixed point sends nothing unless it may send to itself)."""
        if self.fixed_dst != self.npu or not self.others:
            self.clock.wake(self, self.gap() - 1)

    def step(self, cycle: int) -> None:
        dst = self.fixed_dst
        if dst < 0:
            if self.pattern is None:
                dst = uniform_destination(self.sender.npus, self.npu, self.rng, self.others)
            else:
                dst = self.pattern(self.topology, self.npu, self.rng, self.others)
        self.sender.send(self.npu, dst, self.packet_bytes, None, self.packet_bytes, None, None, cycle, self.delay)
        if self.warmup <= cycle < self.end:
            self.generated += 1
        self.clock.wake(self, cycle + self.gap())
