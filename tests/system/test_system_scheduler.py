"""The chunk scheduler: priorities, FIFO/LIFO, intra- and inter-dimension policies, and deadlock-freedom."""

import random

import pytest

from netsim.analytical import AnalyticalNetwork
from netsim.network_config import load_network
from netsim.app.runner import run_training
from system import load_system
from system.functional import Functional
from tests.helpers import analytical, systems_for
from workload.generator import transformer
from workload.roofline import Roofline


def finish_times(systems, calls, net):
    events = [[call(s) for call in calls] for s in systems]
    net.run()
    assert all(e.processed for row in events for e in row)
    return [max(row[i].value.finished_at for row in events) for i in range(len(calls))]


@pytest.mark.parametrize("policy, first", [("FIFO", 0), ("LIFO", 1)])
def test_scheduling_policy_orders_waiting_collectives(policy, first):
    net = analytical("ring-8")
    systems = systems_for(net, scheduling_policy=policy, preferred_dataset_splits=1)
    # a third collective occupies the queue, so the two behind it are both waiting when it frees
    busy, a, b = finish_times(systems, [lambda s: s.all_reduce(2**20), lambda s: s.all_reduce(2**16),
                                        lambda s: s.all_reduce(2**16)], net)
    times = (a, b)
    assert times[first] < times[1 - first]


def test_priority_is_served_first_whatever_the_policy():
    net = analytical("ring-8")
    systems = systems_for(net, scheduling_policy="FIFO", preferred_dataset_splits=1)
    busy, normal, urgent = finish_times(systems, [lambda s: s.all_reduce(2**20), lambda s: s.all_reduce(2**16),
                                                  lambda s: s.all_to_all(2**16, priority=0)], net)
    assert urgent < normal


def test_smallest_first_overtakes_issue_order():
    net = analytical("ring-8")
    systems = systems_for(net, scheduling_policy="FIFO", preferred_dataset_splits=1,
                          intra_dimension_scheduling="smallest-first")
    busy, big, small = finish_times(systems, [lambda s: s.all_reduce(2**20), lambda s: s.all_reduce(2**20),
                                              lambda s: s.all_reduce(2**10)], net)
    assert small < big


def test_less_remaining_phases_first_finishes_chunks_early():
    def first_chunk_done(intra):
        net = analytical("torus-4x4")
        systems = systems_for(net, preferred_dataset_splits=4, intra_dimension_scheduling=intra)
        events = [s.all_reduce(2**20) for s in systems]
        net.run()
        return events[0].value.chunks[0][-1].finished_at

    assert first_chunk_done("less-remaining-phases-first") < first_chunk_done("fifo")


def test_an_npu_starts_its_next_phase_as_soon_as_its_slot_frees():
    """As in ASTRA-sim, slots are per NPU: the first tree's root (NPU 15) finishes chunk 1 long before
    its leaves and starts chunk 2 at once, while a leaf (NPU 0) starts it only when it is done."""
    net = analytical("switch-16")
    systems = systems_for(net, preferred_dataset_splits=2, all_reduce_implementation="double-binary-tree")
    events = [s.all_reduce(2**20) for s in systems]
    net.run()
    root, leaf = events[15].value.chunks, events[0].value.chunks
    assert root[1][0].started_at == root[0][0].finished_at < leaf[0][0].finished_at == leaf[1][0].started_at


def test_two_queues_per_dimension_overlap_like_two_active_chunks():
    size = 8 * 2**20
    times = []
    for options in ({"queues_per_dimension": 2}, {"active_chunks_per_dimension": 2}, {}):
        net = analytical("ring-8")
        times += finish_times(systems_for(net, preferred_dataset_splits=4, **options), [lambda s: s.all_reduce(size)],
                              net)
    assert times[0] == pytest.approx(times[1]) == pytest.approx(times[2] / 2)


def test_round_robin_rotates_the_first_dimension_per_chunk():
    net = analytical("torus-4x4")
    systems = systems_for(net, preferred_dataset_splits=4, inter_dimension_scheduling="round-robin")
    event = systems[0].reduce_scatter(2**16)
    for s in systems[1:]:
        s.reduce_scatter(2**16)
    net.run()
    assert [[p.dim for p in chunk] for chunk in event.value.chunks] == [[0, 1], [1, 0], [0, 1], [1, 0]]


def test_themis_starts_each_chunk_on_the_least_loaded_dimension():
    net = analytical("torus-4x4", bandwidth=["100GB/s", "50GB/s"])
    systems = systems_for(net, preferred_dataset_splits=4, inter_dimension_scheduling="themis")
    events = [s.all_reduce(2**20) for s in systems]
    net.run()
    firsts = [chunk[0].dim for chunk in events[0].value.chunks]
    assert firsts[0] == 0 and 1 in firsts  # dimension 0 is faster, but once loaded the other one leads


class JitteryNetwork(AnalyticalNetwork):
    """Analytical costs times a random factor per message: NPUs' timings drift apart like under congestion."""

    def __init__(self, topology, seed):
        super().__init__(topology)
        self.rng = random.Random(seed)

    def _transmit(self, src, dst, nbytes, tag, notify):
        delay = self.message_time(src, dst, nbytes) * self.rng.uniform(0.1, 10.0)
        self.env.timeout(delay).callbacks.append(lambda _e: self.deliver(src, dst, tag, nbytes))
        event = self.env.event()
        event.succeed()
        return event


@pytest.mark.parametrize("seed", range(6))
def test_no_deadlock_when_timings_differ_between_npus(seed):
    """Many chunks of many collectives with one slot per queue, on a network that skews every message."""
    net = JitteryNetwork(load_network("torus-4x4").build_topology(), seed)
    systems = systems_for(net, preferred_dataset_splits=3, active_chunks_per_dimension=1, scheduling_policy="LIFO",
                          intra_dimension_scheduling="less-remaining-phases-first")
    functional = Functional(systems)
    rng = random.Random(seed)
    events = []
    for s in systems:  # the same program on every NPU, issued at skewed times
        def program(s=s):
            for size in (64, 40, 96):
                yield s.env.timeout(rng.uniform(0, 500))
                events.append(s.all_reduce(size))
                events.append(s.all_to_all(size, dims=[1], priority=1 if size == 40 else None))
                events.append(s.all_gather(size // 8, dims=[0]))
        s.env.process(program())
    net.run()
    assert len(events) == 16 * 9 and all(e.processed for e in events), net.waiting()[:3]
    assert functional.verify() == 3 + 4 * 3 + 4 * 3


# (seed, pairs too, chunks): runs that deadlocked before phases queued by every member went first
@pytest.mark.parametrize("seed, pairs, chunks", [(1, True, 2), (22, False, 4), (23, False, 2), (26, True, 2),
                                                 (31, False, 2), (31, False, 4), (32, False, 4)])
def test_no_deadlock_over_groups_that_do_not_nest(seed, pairs, chunks):
    """As above, with all-reduces over the even NPUs of torus-4x4 and over the odd ones (pairs along
    dimension 0, then quadruples along dimension 1: groups that do not nest), and, with `pairs`, over
    NPU pairs as well (a tensor-parallel group); see system/scheduler.py."""
    net = JitteryNetwork(load_network("torus-4x4").build_topology(), seed)
    systems = systems_for(net, preferred_dataset_splits=chunks, active_chunks_per_dimension=1,
                          scheduling_policy="LIFO")
    rng = random.Random(seed)
    events = []
    for s in systems:  # the same program on every NPU, issued at skewed times
        data_parallel = [npu for npu in range(16) if npu % 2 == s.npu % 2]
        tensor_parallel = [s.npu - s.npu % 2, s.npu - s.npu % 2 + 1]

        def program(s=s, data_parallel=data_parallel, tensor_parallel=tensor_parallel):
            for size in (64, 40, 96, 72, 56, 88):
                yield s.env.timeout(rng.uniform(0, 500))
                if pairs:
                    events.append(s.all_reduce(size // 2, group=tensor_parallel))
                events.append(s.all_reduce(size, group=data_parallel, shape=[2, 4], algorithm_dims=[0, 1]))
        s.env.process(program())
    net.run()
    assert len(events) == 16 * 6 * (2 if pairs else 1) and all(e.processed for e in events), net.waiting()[:3]


def test_hybrid_parallel_transformer_runs_per_message():
    """A tp2 x dp8 transformer on torus-4x4, every NPU per message, on the congestion-aware backend
    (NPUs' timings differ): its data-parallel all-reduces run in NPU pairs along dimension 0, then in quadruples along
    dimension 1, several at once (LIFO). A pair's queue committed to a phase that one partner could not
    reach before a phase of another collective in its dimension-1 group, which waited for that partner
    in the pair's queue: the run deadlocked (system/scheduler.py)."""
    workload = transformer(2, 1024, 2048, 1, tp=2, pp=1, dp=8, roofline=Roofline())
    config = load_system("default", [(["collective-simulation"], "per-message")])
    result = run_training(load_network("torus-4x4", backend="congestion-aware"), config, workload)
    finish = result.summary["npu_finish_time_ns"]
    assert len(finish) == 16 and None not in finish and result.summary["end_to_end_time_ns"] == max(finish)
