"""The legacy ASTRA-sim workload parser: every field of every bundled workload, and errors by line."""

from pathlib import Path

import pytest

from netsim.bundled import bundled_names
from netsim.errors import ConfigError
from workload import load_workload
from workload.legacy_parser import parse_legacy_workload
from workload.model import COMM_TYPES

BUNDLED = bundled_names("workload.data", (".txt",))


def test_all_ten_astra_samples_are_bundled():
    assert len(BUNDLED) == 10
    assert "Resnet50_DataParallel" in BUNDLED


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_every_field_reads_back(name):
    workload = load_workload(name)
    rows = [line.split() for line in Path(BUNDLED[name]).read_text().splitlines() if line.strip()]
    assert workload.parallelism == rows[0][0]
    assert len(workload.layers) == int(rows[1][0]) == len(rows) - 2
    for layer, tokens in zip(workload.layers, rows[2:]):
        assert layer.name == tokens[0]
        assert layer.reserved == int(tokens[1])
        assert [layer.fwd_compute, layer.ig_compute, layer.wg_compute, layer.update_time] == \
            [int(tokens[2]), int(tokens[5]), int(tokens[8]), int(tokens[11])]
        assert [layer.fwd_comm.kind, layer.ig_comm.kind, layer.wg_comm.kind] == \
            [COMM_TYPES[tokens[3]], COMM_TYPES[tokens[6]], COMM_TYPES[tokens[9]]]
        assert [layer.fwd_comm.nbytes, layer.ig_comm.nbytes, layer.wg_comm.nbytes] == \
            [int(tokens[4]), int(tokens[7]), int(tokens[10])]
        assert layer.parallelism == (tokens[12] if len(tokens) > 12 else None)


def test_known_values_of_resnet50_and_transformer_header():
    conv1 = load_workload("Resnet50_DataParallel").layers[0]
    assert (conv1.name, conv1.fwd_compute, conv1.ig_compute, conv1.wg_compute) == ("conv1", 13003, 12864, 32291)
    assert (conv1.wg_comm.kind, conv1.wg_comm.nbytes, conv1.update_time) == ("all-reduce", 37632, 3229)
    transformer = load_workload("Transformer_HybridParallel_Fwd_In_Bckwd")
    assert transformer.options == {"model_parallel_NPU_group": [4], "checkpoints": [2, 2, 11],
                                   "checkpoint_initiates": [2, 19, 10]}


@pytest.mark.parametrize("body, message", [
    ("DATA\n2\nl1 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 1\nl2 -1 five NONE 0 5 NONE 0 5 NONE 0 1\n",
     r":4: field 'fwd compute': expected an integer, got 'five'"),
    ("DATA\n1\nl1 -1 5 NONE 0 5 BROADCASTX 0 5 NONE 0 1\n", r":3: field 'ig comm type': expected one of"),
    ("DATA\n1\nl1 -1 5 NONE 0 5 NONE 0 5 NONE\n", r":3: expected 12 fields per layer, got 10 \(missing 'wg comm size'\)"),
    ("DATA\n3\nl1 -1 5 NONE 0 5 NONE 0 5 NONE 0 1\n", r":2: says 3 layers but the file has 1"),
    ("DATA\nmany\n", r":2: expected the number of layers"),
])
def test_malformed_lines_name_their_line(tmp_path, body, message):
    path = tmp_path / "bad.txt"
    path.write_text(body)
    with pytest.raises(ConfigError, match=message) as info:
        parse_legacy_workload(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_astra_sim_2x_header_options_netsim_does_not_model_are_read_with_a_warning(tmp_path):
    """ASTRA-sim 2.x's workloads carry pp:, vpp:, ga:, ... which no netsim loop models: a warning, not
    a refusal (a misspelt option is refused: test_bad_inputs)."""
    from netsim.errors import NetsimWarning

    path = tmp_path / "w.txt"
    path.write_text("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 pp: 1 vpp: 8\n1\n"
                    "l1 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 1000 5\n")
    with pytest.warns(NetsimWarning, match=r"workload header option 'pp:' \(ASTRA-sim 2.x\) is not modelled"):
        workload = load_workload(path)
    assert workload.options["model_parallel_NPU_group"] == [2]
