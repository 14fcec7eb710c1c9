"""Config errors: unknown keys (with did-you-mean), bad units and missing files give one clear line."""

import subprocess

import pytest

from netsim.errors import ConfigError
from netsim.network_config import load_network
from system import load_system
from tests.helpers import netsim_command


def write(tmp_path, text, name="net.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = '[topology]\nkind = "torus"\ndims = [4]\nbandwidth = "50GB/s"\nlatency = "500ns"\n'


def test_unknown_key_suggests_the_right_one(tmp_path):
    path = write(tmp_path, GOOD.replace("latency", "latncy"))
    with pytest.raises(ConfigError, match=r"net.toml:5: key 'topology.latncy': unknown key \(did you mean 'latency'\?\)"):
        load_network(path)


def test_bad_unit_names_file_line_key_and_expected_form(tmp_path):
    path = write(tmp_path, GOOD.replace('"50GB/s"', '"50 furlongs"'))
    with pytest.raises(ConfigError, match=r"net.toml:4: key 'topology.bandwidth': expected a bandwidth like"):
        load_network(path)


def test_wrong_type_and_missing_key(tmp_path):
    with pytest.raises(ConfigError, match=r"key 'topology.dims': expected a list"):
        load_network(write(tmp_path, GOOD.replace("[4]", '"four"')))
    with pytest.raises(ConfigError, match=r"key 'topology.latency': missing; expected link latency"):
        load_network(write(tmp_path, GOOD.replace('latency = "500ns"\n', "")))


def test_missing_file_and_unknown_bundled_name():
    with pytest.raises(ConfigError, match=r"nowhere.toml: network file not found"):
        load_network("nowhere.toml")
    with pytest.raises(ConfigError, match=r"unknown network 'torus-9x9'.*torus-4x4"):
        load_network("torus-9x9")


def test_invalid_toml_names_the_file(tmp_path):
    with pytest.raises(ConfigError, match=r"net.toml: invalid TOML"):
        load_network(write(tmp_path, "[topology\n"))


def test_override_errors_name_the_override():
    with pytest.raises(ConfigError, match=r"--set garnet.vcs \(over .*torus-4x4.toml\): key 'garnet.vcs': expected a whole number >= 1"):
        load_network("torus-4x4", [(["garnet", "vcs"], 0)])


def test_system_config_forms_and_errors(tmp_path, astra_sim_inputs):
    legacy = load_system(astra_sim_inputs / "system/sample_torus_sys.txt")
    assert (legacy.scheduling_policy, legacy.endpoint_delay, legacy.preferred_dataset_splits) == ("LIFO", 1.0, 4)
    assert legacy.all_reduce == ("ring", "ring", "ring")
    v2 = load_system(astra_sim_inputs / "v2/system/native_collectives/Ring_4chunks.json")
    assert (v2.local_mem_bw, v2.active_chunks_per_dimension) == (1600.0, 1)
    bad = write(tmp_path, "scheduling-policy = \"LIFO\"\nendpoint-dealy = 10\n", "sys.toml")
    with pytest.raises(ConfigError, match=r"sys.toml:2: key 'endpoint-dealy': unknown key \(did you mean 'endpoint-delay'\?\)"):
        load_system(bad)
    bad = write(tmp_path, "scheduling-policy: SOMETIMES\n", "sys.txt")
    with pytest.raises(ConfigError, match=r"sys.txt:1: key 'scheduling-policy': expected one of FIFO, LIFO"):
        load_system(bad)


@pytest.mark.parametrize("args, message", [
    (["run", "--network", "missing.toml"], "netsim: error: missing.toml: network file not found"),
    (["run", "--set", "topology.bandwidth=5GB"], "key 'topology.bandwidth': expected a bandwidth"),
    (["run", "--set", "garnet.vc=2"], "unknown key (did you mean 'vcs'?)"),
    (["run", "--set", "endpoint-delay=soon"], "key 'endpoint-delay': expected a time"),
    (["collective", "all-reduce", "--size", "lots"], "--size: expected a size"),
    (["run", "--set", "topology=3"], "key 'topology': expected a table, got 3"),
    (["run", "--set", "workload.bucket-sise=25MiB"], "unknown workload option (did you mean 'bucket-size'?)"),
    (["synth", "--pattern", "uniform", "--rate", "0.1", "--packet-flits", "0"], "--packet-flits 0 and --cycles"),
    (["run", "--passes", "0"], "netsim: error: --passes: expected a whole number >= 1, got 0"),
    (["collective", "all-reduce", "--size", "1KiB", "--verify", "--seed", "-1"],
     "netsim: error: --seed: expected a whole number >= 0, got -1"),
    (["synth", "--pattern", "uniform", "--rate", "0.1", "--warmup", "-1"],
     "netsim: error: --warmup: expected a whole number >= 0, got -1"),
    (["report", "nothing", "--top", "-1"], "netsim: error: --top: expected a whole number >= 1, got -1"),
])
def test_cli_prints_one_line_and_exits_2(tmp_path, args, message):
    assert message in one_line_error(tmp_path, args)


def one_line_error(tmp_path, args) -> str:
    """Run the CLI on `args`: it must exit 2 with one line on stderr (no traceback); that line."""
    out = ["--out", str(tmp_path / "o")] if args[0] in ("run", "collective", "synth") else []
    result = subprocess.run([*netsim_command(), *args, *out], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    return result.stderr


@pytest.mark.parametrize("args, message", [
    (["collective", "all-reduce", "--size", "64KiB", "--set", "topology.latency=nan"], "not a finite number"),
    (["collective", "all-reduce", "--size", "64KiB", "--set", "garnet.clock_ghz=inf"], "expected a positive number"),
    (["run", "--workload", "{binary}"], "not a UTF-8 text file"),
    (["workload", "gen", "--gemm", "{folder}"], "is a folder, expected a file"),
])
def test_unusable_values_and_files_are_one_line_errors(tmp_path, args, message):
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe")
    args = [a.format(binary=binary, folder=tmp_path) for a in args]
    assert message in one_line_error(tmp_path, args)
