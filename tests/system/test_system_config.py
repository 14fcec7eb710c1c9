"""System configs: every sample loads in all three forms; bad algorithm choices fail in one clear line."""

from pathlib import Path

import pytest

from netsim.errors import ConfigError
from system import build_systems, load_system
from system.config import algorithm_list
from tests.helpers import analytical, systems_for

BUNDLED = Path(__file__).resolve().parents[2] / "system" / "configs"


@pytest.mark.parametrize("path", sorted(p for p in BUNDLED.iterdir() if p.suffix in (".toml", ".txt", ".json")),
                         ids=lambda p: p.name)
def test_bundled_samples_load_and_run_where_they_fit(path):
    config = load_system(path)
    dims = max(len(config.algorithms(kind)) for kind in ("all-reduce", "reduce-scatter", "all-gather", "all-to-all"))
    net = analytical({1: "torus-4x4", 2: "torus-4x4", 3: "torus-2x4x4"}[dims])
    systems = build_systems(net, config)
    events = [s.all_reduce(2**16) for s in systems] + [s.all_to_all(2**12) for s in systems]
    net.run()
    assert all(e.processed for e in events)


def test_astra_sim_samples_load(astra_sim_inputs):
    paths = sorted((astra_sim_inputs / "system").glob("*.txt")) + sorted(
        (astra_sim_inputs / "v2" / "system" / "native_collectives").glob("*.json"))
    assert paths
    for path in paths:
        config = load_system(path)
        assert config.preferred_dataset_splits >= 1


def test_legacy_spellings():
    config = load_system(BUNDLED / "sample_a2a_sys.txt")
    assert config.all_reduce == ("double-binary-tree",)
    assert config.all_gather == ("halving-doubling",)
    assert (config.phase_barrier, config.local_mem_bw) == ("all", 500000)  # ASTRA-sim v1's, which has no key for them
    assert algorithm_list("ring_halvingDoubling_direct8") == ("ring", "halving-doubling", "direct8")
    assert algorithm_list(["oneRing"]) == ("one-ring",)


def test_new_scheduler_keys_parse_and_reject_bad_values():
    config = load_system("default", [(["queues-per-dimension"], 2), (["intra-dimension-scheduling"], "smallest-first"),
                                     (["inter-dimension-scheduling"], "themis")])
    assert (config.queues_per_dimension, config.intra_dimension_scheduling, config.inter_dimension_scheduling) == \
        (2, "smallest-first", "themis")
    with pytest.raises(ConfigError, match="inter-dimension-scheduling"):
        load_system("default", [(["inter-dimension-scheduling"], "sideways")])


def one_line(exc_info) -> str:
    message = str(exc_info.value)
    assert "\n" not in message
    return message


def test_unknown_algorithm_names_the_key_and_the_algorithm():
    with pytest.raises(ConfigError) as exc:
        systems_for(analytical("torus-4x4"), all_reduce_implementation="ring_rign")
    assert "all-reduce-implementation" in one_line(exc) and "'rign'" in one_line(exc) and "did you mean" in one_line(exc)


def test_list_length_mismatch_names_both_lengths():
    with pytest.raises(ConfigError) as exc:
        systems_for(analytical("torus-4x4"), all_gather_implementation="ring_ring_direct")
    message = one_line(exc)
    assert "3 algorithms" in message and "ring_ring_direct" in message and "2 dimensions" in message


def test_non_power_of_two_where_the_algorithm_cannot_names_algorithm_and_size():
    with pytest.raises(ConfigError) as exc:
        systems_for(analytical("ring-8", dims=[6]), reduce_scatter_implementation="halving-doubling")
    message = one_line(exc)
    assert "halving-doubling" in message and "6 NPUs" in message and "power-of-two" in message


def test_an_algorithm_that_lacks_the_collective_is_refused():
    with pytest.raises(ConfigError) as exc:
        systems_for(analytical("ring-8"), all_gather_implementation="double-binary-tree")
    assert "does not implement all-gather" in one_line(exc)


def test_bad_collective_calls_are_one_line_errors():
    systems = systems_for(analytical("ring-8"))
    with pytest.raises(ConfigError, match="unknown collective 'allreduce'"):
        systems[0].collective("allreduce", 10)
    with pytest.raises(ConfigError, match="must list distinct NPUs including this one"):
        systems[0].collective("all-reduce", 10, group=(1, 2))


def test_astra_sim_keys_netsim_does_not_model_are_read_as_astra_sim_does(tmp_path):
    """v1 and 2.x accept trace, log and LogGP keys that change nothing without the shared bus; with
    the shared bus on they would, so that is refused."""
    path = tmp_path / "v1_sys.txt"
    lines = ["all-reduce-implementation: ring", "local-reduction-delay: 1", "L: 0", "o: 0", "g: 0", "G: 0.0038",
             "seprate-log: 1", "gap-denominator: 1"]
    path.write_text("\n".join(lines + ["model-shared-bus: 0"]) + "\n")
    assert load_system(path).all_reduce == ("ring",)
    path.write_text("\n".join(lines + ["model-shared-bus: 1"]) + "\n")
    with pytest.raises(ConfigError, match=r"v1_sys.txt:9: key 'model-shared-bus': .*not modelled"):
        load_system(path)


@pytest.mark.parametrize("network, expected", [("fat-tree-32", ("direct",)), ("switch-16", ("direct",)),
                                               ("dgx-8x4", ("direct",)), ("torus-4x4", ("ring",))])
def test_default_all_to_all_is_direct_where_every_npu_is_one_hop_away(network, expected):
    """The default system names no all-to-all: direct on switch, fully-connected and fat-tree
    dimensions (a ring all-to-all there took 2.58 ms for 1 MiB on fat-tree-32, direct 8.7 us), ring on
    rings; the summary shows what ran (issue 28, item 13)."""
    from netsim.network_config import load_network
    from netsim.app.runner import run_collective

    result = run_collective(load_network(network), load_system("default"), "all-to-all", 1 << 20)
    assert tuple(result.summary["system"]["all-to-all-implementation"]) == expected
    chosen = run_collective(load_network(network), load_system("default", [(["all-to-all-implementation"],
                                                                            list(expected))]), "all-to-all", 1 << 20)
    assert result.summary["collective_time_ns"] == chosen.summary["collective_time_ns"]


def test_astra_sim_files_and_explicit_choices_keep_their_all_to_all(tmp_path):
    from netsim.backends import create_network
    from netsim.network_config import load_network

    network = load_network("fat-tree-32")
    backend = create_network(network.backend, network.build_topology(), config=network)
    legacy = tmp_path / "s.txt"
    legacy.write_text("scheduling-policy: LIFO\nall-reduce-implementation: ring\n")
    for system in (load_system(legacy), load_system("default", [(["all-to-all-implementation"], "ring")])):
        assert build_systems(backend, system)[0].config.all_to_all == ("ring",)
