"""Every sample runs; TOML workloads and their errors; the roofline generator; DDP bucketing; reports."""

from dataclasses import replace

import pytest

from netsim.bundled import bundled_names
from netsim.app.cli import main
from netsim.errors import ConfigError
from netsim.network_config import load_network
from netsim.app.runner import run_training
from system import load_system
from workload import load_workload
from workload.generator import to_legacy, to_toml, transformer
from workload.legacy_parser import parse_legacy_workload
from workload.roofline import Roofline
from workload.toml_form import parse_toml_workload

SAMPLES = sorted(bundled_names("workload.data", (".txt",)))


def run(workload, network="torus-4x4", passes=1):
    return run_training(load_network(network, []), load_system("default", []), workload, passes)


@pytest.mark.parametrize("name", SAMPLES)
def test_every_bundled_sample_runs(name):
    result = run(load_workload(name))
    s = result.summary
    assert s["end_to_end_time_ns"] > 0 and len(s["npu_finish_time_ns"]) == 16
    assert 0 <= s["compute_comm_overlap_ns"] <= s["comm_busy_time_ns"]


def test_the_astra_sim_samples_are_the_bundled_ones(astra_sim_inputs):
    files = sorted((astra_sim_inputs / "workload").glob("*.txt"))
    assert sorted(f.stem for f in files) == SAMPLES
    for path in files:
        assert parse_legacy_workload(path).layers == load_workload(path.stem).layers


TOML = """
[workload]
loop = "DATA"
[options]
bucket-size = "1MiB"
[roofline]
peak-tflops = 100
memory-bandwidth = "1000GB/s"
[[layer]]
name = "a"
gemm = [1024, 1024, 1024]
wg-comm = "all-reduce"
wg-comm-size = "2MiB"
[[layer]]
name = "b"
fwd-compute = "2us"
wg-compute = 500
wg-comm = "all-reduce"
wg-comm-size = 65536
update-time = "100ns"
"""


def test_toml_workload_with_gemm_and_times(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(TOML)
    workload = parse_toml_workload(path)
    a, b = workload.layers
    assert a.fwd_compute == pytest.approx(max(2 * 1024**3 / 1e5, 3 * 1024**2 * 2 / 1000))
    assert (b.fwd_compute, b.wg_compute, b.update_time, b.wg_comm.nbytes) == (2000, 500, 100, 65536)
    assert workload.options == {"bucket_size": [2**20]}
    assert run(workload).summary["end_to_end_time_ns"] > 0


@pytest.mark.parametrize("edit, message", [
    (("gemm = [1024, 1024, 1024]", "gemm = [1024, 1024]"), r"w.toml:11: layer 0 key 'gemm': expected \[M, N, K\]"),
    (('fwd-compute = "2us"', 'fwd-compute = "2 parsecs"'), r"w.toml:16: layer 1 key 'fwd-compute'"),
    (('wg-comm-size = 65536', 'wg-comm-sise = 65536'), r"w.toml:19: layer 1 key 'wg-comm-sise': unknown key "
                                                       r"\(did you mean 'wg-comm-size'\?\)"),
    (('loop = "DATA"', 'lop = "DATA"'), r"key 'workload.lop': unknown key .*did you mean 'loop'"),
    (('loop = "DATA"', 'name = 5'), r"key 'workload.loop': expected the training loop's name"),
    (('bucket-size = "1MiB"', 'bucket-size = "lots"'), r"w.toml:5: key 'options.bucket-size'"),
    (("[[layer]]\nname = \"a\"", "[[layer]]\nname = \"a\"\nfwd-comm = \"broadcastx\""),
     r"w.toml:11: layer 0 key 'fwd-comm': expected one of"),
    (("peak-tflops = 100", "peak-tflops = 0"), r"key 'roofline': expected a positive number, got 0"),
])
def test_malformed_toml_workloads_name_file_line_and_key(tmp_path, edit, message):
    path = tmp_path / "w.toml"
    path.write_text(TOML.replace(*edit))
    with pytest.raises(ConfigError, match=message) as info:
        parse_toml_workload(path)
    assert "\n" not in str(info.value)


def test_malformed_legacy_reserved_field_names_its_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("DATA\n2\nl1 -1 5 NONE 0 5 NONE 0 5 NONE 0 1\nl2 3 5 NONE 0 5 NONE 0 5 NONE 0 1\n")
    with pytest.raises(ConfigError, match=r"bad.txt:4: field 'reserved'"):
        parse_legacy_workload(path)


def test_roofline_is_compute_or_memory_bound():
    roofline = Roofline(peak_tflops=100, memory_GBps=1000, bytes_per_element=2)
    assert roofline.gemm_ns(4096, 4096, 4096) == pytest.approx(2 * 4096**3 / 1e5)  # compute bound
    assert roofline.gemm_ns(1, 4096, 4096) == pytest.approx((4096 + 4096**2 + 4096) * 2 / 1000)  # memory bound


def test_megatron_tensor_parallel_all_reduces_in_forward_and_input_gradient_data_parallel_in_weights(tmp_path):
    workload = transformer(1, 1024, 512, 1, tp=4, pp=1, dp=2, roofline=Roofline())
    assert workload.parallelism == "HYBRID_TRANSFORMER" and workload.options == {"model_parallel_NPU_group": [4]}
    qkv, proj, fc1, fc2 = workload.layers
    activation = 512 * 1024 * 2
    assert [l.fwd_comm.nbytes for l in workload.layers] == [0, activation, 0, activation]
    assert [l.ig_comm.nbytes for l in workload.layers] == [activation, 0, activation, 0]
    assert qkv.wg_comm.nbytes == 3 * 1024 // 4 * 1024 * 2
    for text, suffix in ((to_legacy(workload), "txt"), (to_toml(workload), "toml")):
        path = tmp_path / f"t.{suffix}"
        path.write_text(text)
        again = load_workload(path)
        assert [l.wg_comm for l in again.layers] == [l.wg_comm for l in workload.layers]
        assert again.options == workload.options and again.parallelism == workload.parallelism


def test_workload_gen_cli_from_gemm_csv_writes_both_forms_that_run(tmp_path):
    csv = tmp_path / "gemms.csv"
    csv.write_text("name,M,N,K\nfc1,512,1024,1024\nfc2,512,1024,1024\n")
    assert main(["workload", "gen", "--gemm", str(csv), "--out", str(tmp_path), "--quiet"]) == 0
    legacy, toml = load_workload(tmp_path / "gemms.txt"), load_workload(tmp_path / "gemms.toml")
    strip = lambda w: [replace(layer, line=0) for layer in w.layers]  # noqa: E731
    assert strip(legacy) == strip(toml) and legacy.parallelism == "DATA"
    assert main(["run", "--workload", str(tmp_path / "gemms.toml"), "--network", "ring-8", "--quiet",
                 "--out", str(tmp_path / "out"), "--set", "workload.bucket-size=1MiB"]) == 0


@pytest.mark.parametrize("args, message", [
    (["--gemm", "GOOD", "--parallel", "MODEL", "--npus", "0"], "--npus: expected a whole number >= 1, got 0"),
    (["--gemm", "GOOD", "--parallel", "MODEL", "--npus", "-4"], "--npus: expected a whole number >= 1, got -4"),
    # an option of the other kind of workload is refused, not ignored
    (["--gemm", "GOOD", "--npus", "4"], "--npus: applies to --gemm with --parallel MODEL (a DATA workload runs on "
                                        "the network's NPUs)"),
    (["--gemm", "GOOD", "--tp", "2"], "--tp: applies to transformer workloads (without --gemm); --gemm takes "
                                      "--parallel and --npus"),
    (["--layers", "4", "--parallel", "MODEL"], "--parallel: applies to --gemm; a transformer takes --tp, --pp and --dp"),
    (["--gemm", "GOOD", "--peak-tflops", "0"], "--peak-tflops: expected a positive number, got 0.0"),
    (["--gemm", "GOOD", "--peak-tflops", "nan"], "--peak-tflops: expected a positive number, got nan"),
    (["--gemm", "GOOD", "--bytes-per-element", "0"], "--bytes-per-element: expected a whole number >= 1, got 0"),
    (["--peak-tflops", "-1"], "--peak-tflops: expected a positive number, got -1.0"),
    (["--tp", "0"], "--tp: expected a whole number >= 1, got 0"),
    (["--micro-batches", "-2"], "--micro-batches: expected a whole number >= 1, got -2"),
    (["--gemm", "BAD"], "BAD:4: expected positive integer columns M, N, K, got {'M': '0', 'N': '1024', 'K': '1024'}"),
    (["--gemm", "GOOD", "--parallel", "MODEL", "--npus", "2048"],
     "GOOD:2: N = 1024 cannot be split over --npus 2048 (MODEL parallelism gives each NPU N / npus columns)"),
])
def test_workload_gen_rejects_non_positive_numbers_with_one_line(tmp_path, capsys, args, message):
    good, bad = tmp_path / "gemms.csv", tmp_path / "zero.csv"
    good.write_text("name,M,N,K\nfc1,512,1024,1024\n")
    bad.write_text("M,N,K\n512,1024,1024\n\n0,1024,1024\n")  # the blank line counts in line numbers
    paths = {"GOOD": str(good), "BAD": str(bad)}
    args = [paths.get(arg, arg) for arg in args]
    assert main(["workload", "gen", *args, "--out", str(tmp_path / "out")]) == 2
    expected = message.replace("GOOD", str(good)).replace("BAD", str(bad))
    assert capsys.readouterr().err == f"netsim: error: {expected}\n"
    assert not (tmp_path / "out").exists()  # nothing written


def test_bucketing_trades_collective_latency_against_overlap():
    base = load_workload("Resnet50_DataParallel")
    times = {size: run(base.with_options(bucket_size=[size]), network="ring-8").summary["end_to_end_time_ns"]
             for size in (2**16, 2**22, 2**30)}
    assert times[2**22] < times[2**16] and times[2**22] < times[2**30]
    one_bucket = run(base.with_options(bucket_size=[2**30]), network="ring-8").tables["end_to_end"]
    assert (one_bucket["wg_total_comm_ns"] > 0).sum() == 1  # a single all-reduce, issued by layer 0
