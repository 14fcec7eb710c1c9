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
