"""Synthetic traffic: patterns, load accounting, saturation ordering, determinism."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest

from netsim.booksim_rng import KnuthRandom
from netsim.errors import ConfigError
from netsim.network_config import load_network
from netsim.app.saturation import past_saturation, saturation
from netsim.topology import TOPOLOGY_KINDS
from netsim.topology.torus import TorusSpec
from netsim.app.traffic import PATTERNS, SynthRun, run_synth, sweep_synth
from tests.helpers import network_config


def noc(dims=(8, 8), **garnet):
    """The bundled NoC torus settings (1-cycle links, 4 VCs x 4 flits) on `dims`."""
    topology = {"kind": "torus", "dims": list(dims), "bandwidth": "16GB/s", "latency": "1ns"}
    return network_config(topology, **{"clock_ghz": 1.0, "flit_bytes": 16, "vcs": 4, "buffer_flits": 4, **garnet})


def test_patterns_are_permutations_or_random():
    topo = TOPOLOGY_KINDS["torus"].build(TorusSpec((8, 8), 16.0, 1.0), "t")
    for name in ("transpose", "bit-complement", "bit-reverse", "shuffle", "tornado", "neighbour"):
        dsts = [PATTERNS[name](topo, src, None) for src in range(64)]
        assert sorted(dsts) == list(range(64)), name
    assert PATTERNS["tornado"](topo, 0, None) == 3 + 3 * 8
    assert PATTERNS["transpose"](topo, 1, None) == 8


def test_low_load_is_accepted_and_latency_near_zero_load():
    result = run_synth(noc((4, 4)), "uniform", 0.05, 4, 1000, seed=1, network_options={"check_invariants": True})
    assert result["drained"]
    assert result["accepted_load"] == pytest.approx(result["offered_load"], rel=0.1)
    assert result["offered_load"] == pytest.approx(0.05, rel=0.25)
    # zero load: 2 NIC + (hops+1) routers + hops links + 3 tail flits, ~2 hops average
    assert 9 < result["avg_packet_latency_cycles"] < 16
    assert result["p99_packet_latency_cycles"] >= result["avg_packet_latency_cycles"]
    for key in ("avg_network_latency_cycles", "avg_hops", "packets", "flits", "cycles", "wall_time_s", "events"):
        assert key in result


def test_same_seed_same_result():
    a = run_synth(noc((4, 4)), "hotspot", 0.2, 4, 400, seed=5)
    b = run_synth(noc((4, 4)), "hotspot", 0.2, 4, 400, seed=5)
    a.pop("wall_time_s"), b.pop("wall_time_s")
    assert a == b


def test_uniform_saturation_on_8x8_torus_is_between_0_2_and_1():
    config = load_network("torus-8x8-noc")
    low = run_synth(config, "uniform", 0.2, 4, 600, seed=1)
    high = run_synth(config, "uniform", 0.9, 4, 600, seed=1)
    assert not past_saturation(low, 15)
    assert past_saturation(high, 15) and high["accepted_load"] < 0.8


def test_tornado_saturates_before_uniform():
    config = load_network("torus-8x8-noc")
    _, uniform = sweep_synth(config, "uniform", 4, 500, 1, rates=[0.1, 0.2, 0.3])
    _, tornado = sweep_synth(config, "tornado", 4, 500, 1, rates=[0.1, 0.2, 0.3])
    assert tornado < uniform


@pytest.mark.parametrize("better, gains", [({"vcs": 4}, True), ({"buffer_flits": 8}, False)])
def test_more_vcs_or_deeper_buffers_never_lower_saturation(better, gains):
    """Up to one flit per node per cycle, so the base network (2 VCs: one per dateline class)
    really saturates (at ~0.6): more VCs raise saturation (to the injection limit), deeper buffers
    do not lower it."""
    rates = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    _, base = sweep_synth(noc((4, 4), vcs=2), "uniform", 4, 500, 1, rates=rates)
    _, more = sweep_synth(noc((4, 4), **{"vcs": 2, **better}), "uniform", 4, 500, 1, rates=rates)
    assert 0 < base < 0.95
    assert more > base if gains else more >= base


def test_sweep_finds_saturation_without_rates():
    results, load = sweep_synth(noc((4, 4), vcs=2), "uniform", 4, 300, 2)
    assert 0.2 < load < 1.0
    assert any(r["saturated"] for r in results) and [r["rate"] for r in results] == sorted(r["rate"] for r in results)


def test_a_sweep_flags_saturation_by_the_studies_rule():
    """`netsim synth --sweep` and the studies share one rule (netsim.app.saturation): a sweep's
    `saturated` flags are `past_saturation` against its zero-load latency (its run at 0.002), and
    its saturation load is the low end of the studies' bracket."""
    config = load_network("torus-8x8-noc")
    results, load = sweep_synth(config, "uniform", 4, 1000, 1, rates=[0.3, 0.35, 0.36, 0.37, 0.38, 0.4])
    zero = run_synth(config, "uniform", 0.002, 4, 1000, 1)["avg_packet_latency_cycles"]
    assert [r["saturated"] for r in results] == [past_saturation(r, zero) for r in results]
    assert load == saturation(results, zero).low
    assert any(3 * zero < r["avg_packet_latency_cycles"] < 10 * zero for r in results)  # where the rules differed


@pytest.mark.parametrize("pattern, dims", [("nonsense", (4, 4)), ("bit-reverse", (3, 3))])
def test_bad_pattern_is_a_config_error(pattern, dims):
    with pytest.raises(ConfigError):
        run_synth(noc(dims), pattern, 0.1, 4, 100, seed=1)


BOOKSIM_WIRING = Path(__file__).parents[1] / "data" / "booksim2" / "wiring"
DRAGONFLY_72 = {"kind": "dragonfly", "p": 2, "a": 4, "h": 2, "bandwidth": "16GB/s", "latency": "1ns"}


def test_knuth_generator_matches_knuths_check_value():
    """rng.c's own self-test: after ran_start(310952), 2010 calls of ran_array(a, 1009) leave a[0] = 995235265."""
    state = KnuthRandom(310952).state
    for _ in range(2010):
        numbers = KnuthRandom._array(state, 1009)
    assert numbers[0] == 995235265


def test_random_permutation_is_booksims_randperm():
    table = pd.read_csv(BOOKSIM_WIRING / "randperm_64_seed0.csv")
    run = SynthRun(noc(), "random-permutation", 0.01, 4, 10, seed=0, warmup_cycles=0)
    assert run.permutation == list(table.dest)  # source i -> row i
    assert [source.fixed_dst for source in run.sources] == list(table.dest)
    assert SynthRun(noc(), "random-permutation", 0.01, 4, 10, seed=0, warmup_cycles=0).permutation == run.permutation
    other = SynthRun(noc(), "random-permutation", 0.01, 4, 10, seed=1, warmup_cycles=0).permutation
    assert sorted(other) == list(range(64)) and other != run.permutation


def test_bad_dragon_sends_to_the_next_group():
    topo = network_config(DRAGONFLY_72).build_topology()
    rng = random.Random(3)
    for src in range(72):
        dsts = {PATTERNS["bad-dragon"](topo, src, rng) for _ in range(200)}
        next_group = (src // 8 + 1) % 9
        assert dsts == set(range(8 * next_group, 8 * next_group + 8)), src  # every NPU of it, no other
    with pytest.raises(ConfigError, match="'bad-dragon' needs a dragonfly, not a torus"):
        run_synth(noc((4, 4)), "bad-dragon", 0.05, 4, 100, seed=1)


@pytest.mark.parametrize("network, pattern, bound", [
    (noc((4, 4)), "uniform", 8 / 4 * 15 / 16),  # k-ary 2-cube: 8/k, the NPU itself left out of its destinations
    (noc((8, 8)), "uniform", 8 / 8 * 63 / 64),
    (noc((8, 8)), "tornado", 1 / 3),  # 3 hops each way round a ring of 8, every link carrying 3 sources
    (noc((8, 8), nic_ports="single"), "neighbour", 1.0),  # one hop: the NIC's one flit a cycle binds
    (load_network("switch-16", backend="garnet"), "uniform", 1.0),  # each NPU's one link to the switch
    (load_network("switch-16", backend="garnet"), "hotspot", 1 / (0.25 * 15 + 0.75)),  # NPU 0's link
])
def test_the_channel_load_bound_is_the_closed_form(network, pattern, bound):
    from netsim.app.traffic import ideal_saturation_load

    assert ideal_saturation_load(network, pattern) == pytest.approx(bound)


def test_no_run_saturates_past_the_channel_load_bound():
    """The bound the congestion study sets its loads by: above it, the network does not keep up."""
    from netsim.app.traffic import ideal_saturation_load

    config = noc((4, 4))
    bound = ideal_saturation_load(config, "tornado")
    below, above = (run_synth(config, "tornado", rate, 4, 1500, 1) for rate in (0.5 * bound, 1.2 * bound))
    zero = run_synth(config, "tornado", 0.01, 4, 1500, 1)["avg_packet_latency_cycles"]
    assert not past_saturation(below, zero) and past_saturation(above, zero)
