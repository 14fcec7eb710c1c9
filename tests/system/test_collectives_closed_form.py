"""Ring collectives on the analytical backend against their closed forms.

One chunk, link bandwidth B, latency a, endpoint delay E, N NPUs, size S:
all-reduce E + 2(N-1)(a + S/(N B) + E); reduce-scatter E + (N-1)(a + S/(N B) + E);
all-gather (S = each NPU's shard) E + (N-1)(a + S/B + E).
"""

import pytest

from tests.helpers import analytical, systems_for

B, A = 50.0, 500.0


def run(network, kind, nbytes, **system):
    net = analytical(network)
    systems = systems_for(net, **system)
    events = [s.collective(kind, nbytes) for s in systems]
    net.run()
    assert all(e.processed for e in events)
    return max(e.value.finished_at for e in events), net


@pytest.mark.parametrize("n", [2, 4, 8, 16])
@pytest.mark.parametrize("size", [2**20, 3 * 2**20 + 48])
def test_ring_all_reduce(n, size):
    net = analytical("ring-8", dims=[n])
    systems = systems_for(net, endpoint_delay=0, preferred_dataset_splits=1)
    events = [s.all_reduce(size) for s in systems]
    net.run()
    slice_bytes = -(-size // n)  # slices round up so no byte is lost
    assert max(e.value.finished_at for e in events) == pytest.approx(2 * (n - 1) * (A + slice_bytes / B))


def test_ring_all_reduce_matches_closed_form_exactly():
    n, size = 8, 8 * 2**20
    time, net = run("ring-8", "all-reduce", size, endpoint_delay=0, preferred_dataset_splits=1)
    assert time == pytest.approx(2 * (n - 1) * (A + size / (n * B)))
    # every byte crosses the ring: each NPU sends 2(N-1) slices of S/N
    assert net.bytes_sent == [2 * (n - 1) * size // n] * n


@pytest.mark.parametrize("delay", [0, 10, 250])
def test_endpoint_delay_adds_once_per_step_and_once_per_phase(delay):
    n, size = 8, 2**20
    time, _ = run("ring-8", "all-reduce", size, endpoint_delay=delay, preferred_dataset_splits=1)
    assert time == pytest.approx(delay + 2 * (n - 1) * (A + size / (n * B) + delay))


def test_ring_reduce_scatter_and_all_gather():
    n, size = 8, 2**20
    rs, _ = run("ring-8", "reduce-scatter", size, endpoint_delay=10, preferred_dataset_splits=1)
    assert rs == pytest.approx(10 + (n - 1) * (A + size / (n * B) + 10))
    ag, net = run("ring-8", "all-gather", size, endpoint_delay=10, preferred_dataset_splits=1)
    assert ag == pytest.approx(10 + (n - 1) * (A + size / B + 10))
    assert net.bytes_sent == [(n - 1) * size] * n


@pytest.mark.parametrize("chunks", [2, 4, 7])
def test_k_chunks_with_one_active_chunk_take_k_times_one_chunk(chunks):
    n, size = 8, 7 * 8 * 4096
    time, _ = run("ring-8", "all-reduce", size, endpoint_delay=5, preferred_dataset_splits=chunks,
                  active_chunks_per_dimension=1)
    one_chunk = 5 + 2 * (n - 1) * (A + (size / chunks) / (n * B) + 5)
    assert time == pytest.approx(chunks * one_chunk)


def test_two_active_chunks_overlap_on_the_analytical_backend():
    size = 8 * 2**20
    serial, _ = run("ring-8", "all-reduce", size, preferred_dataset_splits=4, active_chunks_per_dimension=1)
    overlapped, _ = run("ring-8", "all-reduce", size, preferred_dataset_splits=4, active_chunks_per_dimension=2)
    assert overlapped == pytest.approx(serial / 2)


def test_hierarchical_all_reduce_on_a_2d_torus():
    """Reduce-scatter on dim 0 (S), all-reduce on dim 1 (S/4), all-gather on dim 0: phases add up."""
    size, p0, p1 = 16 * 2**20, 4, 4
    time, net = run("torus-4x4", "all-reduce", size, endpoint_delay=0, preferred_dataset_splits=1)
    rs0 = (p0 - 1) * (A + size / (p0 * B))
    ar1 = 2 * (p1 - 1) * (A + size / p0 / (p1 * B))
    assert time == pytest.approx(rs0 + ar1 + rs0)
    assert sum(net.bytes_sent) == 16 * (2 * (p0 - 1) * size // p0 + 2 * (p1 - 1) * size // (p0 * p1))


def test_baseline_runs_a_full_all_reduce_per_dimension():
    size = 16 * 2**20
    time, _ = run("torus-4x4", "all-reduce", size, endpoint_delay=0, preferred_dataset_splits=1,
                  collective_optimization="baseline")
    assert time == pytest.approx(2 * 2 * 3 * (A + size / (4 * B)))


def test_collective_over_a_subset_of_dimensions():
    net = analytical("torus-4x4")
    systems = systems_for(net, endpoint_delay=0, preferred_dataset_splits=1)
    events = [s.all_reduce(4 * 2**20, dims=[1]) for s in systems]
    net.run()
    assert events[0].value.finished_at == pytest.approx(2 * 3 * (A + 2**20 / B))
    links = net.link_stats()
    assert links.loc[links["dim"] == 0, "bytes"].sum() == 0


def test_phase_records_split_queueing_from_network_delay():
    net = analytical("ring-8")
    systems = systems_for(net, endpoint_delay=0, preferred_dataset_splits=2, active_chunks_per_dimension=1)
    events = [s.all_reduce(2**20) for s in systems]
    net.run()
    first, second = events[0].value.chunks
    assert first[0].queueing_delay_ns == 0
    assert second[0].queueing_delay_ns == pytest.approx(first[0].network_delay_ns)


@pytest.mark.parametrize("accounting, kind, size, chunks", [
    ("astra-sim", "all-reduce", 3 * 2**20 + 7, [786433] * 5),  # 4 splits of 786,433 leave 3 bytes: a 5th chunk
    ("physical", "all-reduce", 3 * 2**20 + 7, [786434, 786434, 786434, 786433]),
    ("astra-sim", "all-reduce", 10, [16] * 4),  # at least one byte per NPU: 4 chunks of 16
    ("astra-sim", "all-gather", 10, [2] * 5),  # (all-gather has no minimum)
])
def test_chunk_sizes(accounting, kind, size, chunks):
    """ASTRA-sim cuts nbytes // splits per chunk and as many chunks as cover the size; the physical
    accounting splits the size exactly."""
    net = analytical("switch-16")
    systems = systems_for(net, preferred_dataset_splits=4, collective_accounting=accounting)
    events = [s.collective(kind, size) for s in systems]
    net.run()
    assert [chunk[0].nbytes for chunk in events[0].value.chunks] == chunks


def test_all_gather_visits_the_last_dimension_first():
    """As in ASTRA-sim: the shard goes round dimension 1 first, then 4 shards round dimension 0."""
    shard = 2**20
    time, net = run("torus-4x4", "all-gather", shard, endpoint_delay=0, preferred_dataset_splits=1)
    assert time == pytest.approx(3 * (A + shard / B) + 3 * (A + 4 * shard / B))
    systems = systems_for(net, preferred_dataset_splits=1)
    events = [s.all_gather(shard) for s in systems]
    net.run()
    assert [p.dim for p in events[0].value.chunks[0]] == [1, 0]


@pytest.mark.parametrize("accounting, phases", [
    ("astra-sim", [(0, "all-reduce"), (1, "all-reduce"), (0, "all-reduce")]),
    ("physical", [(0, "all-reduce"), (1, "all-reduce")]),
])
def test_a_tree_dimension_in_a_local_bandwidth_aware_all_reduce(accounting, phases):
    """A double-binary-tree dimension cannot reduce-scatter: ASTRA-sim all-reduces the whole data in
    its reduce-scatter place and again in its all-gather place; the physical accounting falls back to
    one all-reduce per dimension."""
    net = analytical("torus-4x4")
    systems = systems_for(net, preferred_dataset_splits=1, all_reduce_implementation=["double-binary-tree", "ring"],
                          collective_accounting=accounting)
    events = [s.all_reduce(2**20) for s in systems]
    net.run()
    record = events[0].value
    assert [(p.dim, p.op, p.nbytes) for p in record.chunks[0]] == [(d, op, 2**20) for d, op in phases]
