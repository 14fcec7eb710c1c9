"""Functional mode: collectives move real payloads; every algorithm computes its collective's definition.

Property tests draw NPU counts, dimension shapes, sizes not divisible by p, chunk counts,
algorithms and scheduler options; each run checks every NPU's result (system.functional).
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsim.errors import ConfigError
from system.functional import Functional, VerificationError
from tests.helpers import analytical, systems_for

KEY = {"all-reduce": "all_reduce_implementation", "reduce-scatter": "reduce_scatter_implementation",
       "all-gather": "all_gather_implementation", "all-to-all": "all_to_all_implementation"}
ALGORITHMS = {
    "all-reduce": ["ring", "direct", "direct2", "halving-doubling", "recursive-doubling", "double-binary-tree",
                   "binary-tree", "one-ring", "one-direct", "one-halving-doubling"],
    "reduce-scatter": ["ring", "direct", "direct3", "halving-doubling", "one-ring", "one-direct"],
    "all-gather": ["ring", "direct", "halving-doubling", "recursive-doubling", "one-ring"],
    "all-to-all": ["ring", "direct", "direct2", "one-direct"],
}
ROOTED = ["broadcast", "reduce", "gather", "scatter", "barrier"]
SHAPES = [("ring-8", {"dims": [n]}) for n in (2, 3, 4, 5, 7, 8)] + [
    ("torus-4x4", {"dims": [a, b]}) for a, b in ((2, 2), (3, 2), (4, 4), (2, 3))] + [
    ("torus-2x4x4", {}), ("torus-2x4x4", {"dims": [2, 3, 2]}), ("switch-16", {"npus": 6})]


def verify(network, overrides, kind, nbytes, dims=None, **system):
    net = analytical(network, **overrides)
    systems = systems_for(net, **system)
    functional = Functional(systems)
    events = [s.collective(kind, nbytes, dims) for s in systems]
    net.run()
    assert all(e.processed for e in events), net.waiting()[:3]
    return functional.verify()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from(SHAPES), kind=st.sampled_from(sorted(ALGORITHMS)), data=st.data(),
       nbytes=st.integers(1, 97), chunks=st.integers(1, 4), active=st.integers(1, 3),
       optimization=st.sampled_from(["localBWAware", "baseline"]),
       inter=st.sampled_from(["ascending", "round-robin", "themis"]), queues=st.integers(1, 2),
       intra=st.sampled_from(["fifo", "smallest-first", "less-remaining-phases-first"]),
       accounting=st.sampled_from(["astra-sim", "physical"]))
def test_every_algorithm_computes_its_collective(shape, kind, data, nbytes, chunks, active, optimization, inter,
                                                 queues, intra, accounting):
    algorithm = data.draw(st.sampled_from(ALGORITHMS[kind]))
    network, overrides = shape
    system = {KEY[kind]: algorithm, "preferred_dataset_splits": chunks, "active_chunks_per_dimension": active,
              "collective_optimization": optimization, "inter_dimension_scheduling": inter,
              "queues_per_dimension": queues, "intra_dimension_scheduling": intra, "collective_accounting": accounting}
    try:
        assert verify(network, overrides, kind, nbytes, **system) == 1
    except ConfigError as exc:  # only power-of-two limits may refuse a shape, and they say so
        assert "power-of-two" in str(exc) and algorithm in str(exc)


@settings(max_examples=40, deadline=None)
@given(shape=st.sampled_from(SHAPES), kind=st.sampled_from(ROOTED), nbytes=st.integers(1, 60),
       chunks=st.integers(1, 3))
def test_rooted_collectives_and_barrier(shape, kind, nbytes, chunks):
    network, overrides = shape
    assert verify(network, overrides, kind, nbytes, preferred_dataset_splits=chunks) == 1


@pytest.mark.parametrize("kind", sorted(ALGORITHMS))
def test_collectives_over_a_subset_of_dimensions(kind):
    net = analytical("torus-2x4x4")
    systems = systems_for(net, preferred_dataset_splits=2)
    functional = Functional(systems)
    events = [s.collective(kind, 50, dims=[0, 2]) for s in systems]
    net.run()
    assert all(e.processed for e in events)
    assert functional.verify() == 32 // 8  # one collective per communicator of 2 x 4 NPUs
    assert (net.link_stats().query("dim == 1")["bytes"] == 0).all()


def test_collectives_over_an_explicit_group_run_only_on_its_members():
    net = analytical("torus-4x4")
    systems = systems_for(net)
    functional = Functional(systems)
    group = (5, 0, 10, 3, 7)
    events = [systems[npu].collective("all-reduce", 33, group=group) for npu in group]
    events += [systems[npu].collective("all-gather", 9, group=group[:2]) for npu in group[:2]]
    net.run()
    assert all(e.processed for e in events)
    assert functional.verify() == 2
    assert all(net.bytes_sent[npu] == 0 for npu in range(16) if npu not in group)


def test_many_collectives_in_flight_each_check_out():
    net = analytical("torus-4x4")
    systems = systems_for(net, active_chunks_per_dimension=2, scheduling_policy="LIFO")
    functional = Functional(systems)
    events = []
    for s in systems:
        events += [s.all_reduce(40), s.all_to_all(48, dims=[1]), s.reduce_scatter(20, dims=[0]), s.all_gather(5)]
    net.run()
    assert all(e.processed for e in events)
    assert functional.verify() == 1 + 4 + 4 + 1  # whole machine twice, 4 rows, 4 columns


def test_a_broken_algorithm_is_caught():
    """The checker is not vacuous: corrupt one payload in flight and verification fails."""
    net = analytical("ring-8", dims=[4])
    systems = systems_for(net)
    functional = Functional(systems)
    events = [s.all_reduce(16) for s in systems]
    original = functional.mailbox.__class__.__setitem__
    corrupted = []

    class Corrupting(dict):
        def __setitem__(self, key, value):
            if not corrupted:
                value = value + 1
                corrupted.append(key)
            original(self, key, value)

    functional.mailbox = Corrupting()
    net.run()
    assert all(e.processed for e in events)
    with pytest.raises(VerificationError, match="wrong sum"):
        functional.verify()
