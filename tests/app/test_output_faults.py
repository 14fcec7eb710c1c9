"""Outputs under faults: a report reads only its own folder, a full disk leaves every file whole or
absent (one line, exit 2, no temporary file), Chakra ranks are unique, YAML aliases are refused,
signals do not lose a finished result, the packet backend's set-up has a budget, and a run folder
can be shared without its absolute paths (issue "Outputs confined to their folder and never torn")."""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from netsim.app.cli import main


def netsim(capsys, *argv) -> tuple[int, str]:
    """Run the `netsim` command in this process: (exit status, stderr)."""
    status = main([str(arg) for arg in argv])
    return status, capsys.readouterr().err


class FullDisk:
    """Files opened for writing share `free` bytes, as on a disk about to fill (optionally only the
    files `applies(path)` picks): a write past them stores what fits, then fails with ENOSPC."""

    def __init__(self, monkeypatch, free: int, applies=lambda path: True):
        self.free = free
        self.applies = applies
        real_open = builtins.open

        def limited_open(file, mode="r", *args, **kwargs):
            stream = real_open(file, mode, *args, **kwargs)
            if any(flag in mode for flag in "wax+") and isinstance(file, (str, Path)) and applies(Path(file)):
                return LimitedStream(stream, self)
            return stream

        monkeypatch.setattr(builtins, "open", limited_open)
        monkeypatch.setattr(io, "open", limited_open)


class LimitedStream:
    """A file opened for writing on a FullDisk."""

    def __init__(self, stream, disk: FullDisk):
        self.stream = stream
        self.disk = disk

    def write(self, data):
        if len(data) <= self.disk.free:
            self.disk.free -= len(data)
            return self.stream.write(data)
        self.stream.write(data[:self.disk.free])
        self.stream.flush()
        self.disk.free = 0
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self.stream, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stream.close()


def one_line_no_space(status: int, err: str) -> None:
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and "No space left on device" in err, err


def no_temporary_files(folder: Path) -> None:
    assert not [path.name for path in folder.rglob("*.tmp")]


# ---------------------------------------------------------------------------- 1. report reads its folder only
def run_folder(capsys, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    status, err = netsim(capsys, "collective", "all-reduce", "--size", "4KiB", "--network", "ring-8", "--out", out,
                         "--quiet")
    assert status == 0, err
    return out


@pytest.mark.parametrize("listed", ["../outside/links.csv", "/etc/hostname", "sub/npus.csv", "..", "links.csv/"])
def test_a_table_listed_outside_the_folder_is_a_damaged_folder_and_never_read(capsys, tmp_path, listed):
    """summary.json listing `../outside/links.csv` (of the same size as the folder's) printed the
    outside file's top link; `/etc/hostname` or `sub/npus.csv` ended in KeyError."""
    from netsim import load
    from netsim.errors import ConfigError

    out = run_folder(capsys, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    links = (out / "links.csv").read_text()
    forged = links.replace("npu-npu", "npu-xyz")  # same size, another kind of link
    (outside / "links.csv").write_text(forged)
    (out / "sub").mkdir()
    shutil.copy(out / "npus.csv", out / "sub" / "npus.csv")
    summary = json.loads((out / "summary.json").read_text())
    target = out / listed
    summary["files"][listed] = target.stat().st_size if target.is_file() else 9  # the size it has, if any
    (out / "summary.json").write_text(json.dumps(summary))
    status, err = netsim(capsys, "report", out)
    assert status == 2 and "damaged output folder" in err and "npu-xyz" not in err, err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(ConfigError, match="damaged output folder"):
        load(out)


def test_a_table_that_links_out_of_the_folder_is_not_read(capsys, tmp_path):
    out = run_folder(capsys, tmp_path)
    outside = tmp_path / "links.csv"
    outside.write_text((out / "links.csv").read_text().replace("npu-npu", "npu-xyz"))
    (out / "links.csv").unlink()
    (out / "links.csv").symlink_to(outside)
    status, err = netsim(capsys, "report", out)
    assert status == 2 and "damaged output folder" in err, err


# ---------------------------------------------------------------------------- 2. full disks
def test_to_chakra_on_a_full_disk_leaves_whole_traces_and_one_line(capsys, tmp_path, monkeypatch):
    """It left a torn .et beside whole ones and ended in a 22-line traceback."""
    from workload.chakra.stream import read_trace_file

    whole = tmp_path / "whole"
    status, err = netsim(capsys, "workload", "to-chakra", "microAllReduce", "--network", "ring-8", "--out", whole,
                         "--quiet")
    assert status == 0, err
    sizes = {path.name: path.stat().st_size for path in whole.iterdir()}
    full = tmp_path / "full"
    FullDisk(monkeypatch, sum(sizes.values()) // 2)
    status, err = netsim(capsys, "workload", "to-chakra", "microAllReduce", "--network", "ring-8", "--out", full,
                         "--quiet")
    one_line_no_space(status, err)
    no_temporary_files(full)
    written = list(full.iterdir())
    assert 0 < len(written) < len(sizes)
    for path in written:
        assert path.stat().st_size == sizes[path.name]
        read_trace_file(path)


def test_workload_gen_on_a_full_disk_leaves_no_torn_workload(capsys, tmp_path, monkeypatch):
    """It left a torn workload file (with a correct one-line error)."""
    whole, full = tmp_path / "whole", tmp_path / "full"
    status, err = netsim(capsys, "workload", "gen", "--layers", "8", "--out", whole, "--quiet")
    assert status == 0, err
    contents = {path.name: path.read_text() for path in whole.iterdir()}
    FullDisk(monkeypatch, sum(len(text) for text in contents.values()) // 2)
    status, err = netsim(capsys, "workload", "gen", "--layers", "8", "--out", full, "--quiet")
    one_line_no_space(status, err)
    no_temporary_files(full)
    written = list(full.iterdir())
    assert len(written) < len(contents)
    for path in written:
        assert path.read_text() == contents[path.name]


def test_report_plot_on_a_full_disk_leaves_no_torn_png(capsys, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    out = run_folder(capsys, tmp_path)
    before = sorted(path.name for path in out.iterdir())
    FullDisk(monkeypatch, 5000)
    status, err = netsim(capsys, "report", out, "--plot", "--quiet")
    one_line_no_space(status, err)
    no_temporary_files(out)
    assert sorted(path.name for path in out.iterdir()) == before


STUDY = """
results = "study.results.jsonl"
[base]
command = "collective"
kind = "all-reduce"
network = "ring-8"
[grid]
size = ["1KiB", "2KiB", "4KiB"]
"""


def test_a_sweep_that_cannot_append_leaves_no_torn_record(capsys, tmp_path, monkeypatch):
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    FullDisk(monkeypatch, 100, applies=lambda path: path.name == "study.results.jsonl")
    status, err = netsim(capsys, "sweep", study, "--jobs", "1", "--quiet")
    one_line_no_space(status, err)
    results = tmp_path / "study.results.jsonl"
    assert results.read_text() == ""  # the first record did not fit: cut back, no torn line
    no_temporary_files(tmp_path)


def test_a_sweep_whose_final_rewrite_fails_keeps_its_records_and_no_temporary(capsys, tmp_path, monkeypatch):
    """The final rewrite left `.study.results.jsonl.<pid>.tmp` and a traceback."""
    from netsim.app.sweep import read_results

    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    FullDisk(monkeypatch, 100, applies=lambda path: path.name.endswith(".tmp"))
    status, err = netsim(capsys, "sweep", study, "--jobs", "1", "--quiet")
    one_line_no_space(status, err)
    no_temporary_files(tmp_path)
    assert len(read_results(tmp_path / "study.results.jsonl")) == 3  # every point, as appended


# ---------------------------------------------------------------------------- 3. one trace file per rank
@pytest.mark.parametrize("given", ["folder", "prefix"])
def test_two_trace_files_of_one_rank_are_an_error(capsys, tmp_path, given):
    """NAME.0.et and NAME.00.et both mapped to rank 0 and one silently won (NPU 0 then ran another
    NPU's graph)."""
    traces = tmp_path / "traces"
    status, err = netsim(capsys, "workload", "to-chakra", "microAllReduce", "--network", "ring-8", "--out", traces,
                         "--quiet")
    assert status == 0, err
    shutil.copy(traces / "microAllReduce.1.et", traces / "microAllReduce.00.et")
    workload = traces if given == "folder" else traces / "microAllReduce"
    status, err = netsim(capsys, "run", "--workload", workload, "--network", "ring-8", "--out", tmp_path / "o",
                         "--quiet")
    assert status == 2, err
    assert "microAllReduce.00.et: a second trace file of rank 0 (beside microAllReduce.0.et)" in err
    assert len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------- 4. alias bombs, huge values
def test_a_yaml_alias_bomb_is_refused_at_once(capsys, tmp_path):
    """~600 bytes of nested anchors inside npus_count grew to gigabytes (the error formatted the
    whole expanded value). Six levels here (a million numbers), so that the test ends on any code."""
    bomb = tmp_path / "bomb.yml"
    bomb.write_text("topology: [ Ring ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\nnpus_count:\n  - &a0 [1, 1, 1, 1, 1, 1, "
                    "1, 1, 1, 1]\n" + "".join(f"  - &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 7)))
    status, err = netsim(capsys, "topo", bomb)
    assert status == 2 and "bomb.yml:6: YAML alias *a0" in err and len(err) < 300, err


def test_an_error_echoes_at_most_a_few_hundred_characters_of_a_value(capsys, tmp_path):
    """A 1 MB topology kind was echoed in full: a 1,000,155-character line."""
    from netsim.errors import MESSAGE_LIMIT

    network = tmp_path / "net.toml"
    network.write_text(f'[topology]\nkind = "{"x" * 1_000_000}"\ndims = [4]\nbandwidth = "50GB/s"\n'
                       f'latency = "500ns"\n')
    status, err = netsim(capsys, "topo", network)
    assert status == 2 and err.startswith(f"netsim: error: {network}") and "characters left out" in err, err[:300]
    assert len(err) < MESSAGE_LIMIT + 100 and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------- 5. signals
def patched_netsim(cwd: Path, patch: str, *argv) -> subprocess.Popen:
    """`netsim ARGV` in a process of its own, started as the console script starts it (netsim.__main__),
    with `patch` (Python) run first: it marks a moment by printing MARK on stderr, so that a test can
    send a signal at that moment."""
    script = f"import os, signal, sys, time\n{textwrap.dedent(patch)}\nfrom netsim.__main__ import main\n" \
             f"sys.exit(main({[str(arg) for arg in argv]!r}))\n"
    import netsim

    tested = str(Path(netsim.__file__).parents[1])  # the checkout under test, whatever is installed
    return subprocess.Popen([sys.executable, "-c", script], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": tested})


def signal_at_mark(process: subprocess.Popen, signum: int | None) -> tuple[int, str, str]:
    """Wait for MARK on the process's stderr, send `signum` (None: the process signals itself), and
    return (exit status, stdout, the rest of stderr)."""
    for line in process.stderr:
        if line.startswith("MARK"):
            break
    if signum is not None:
        process.send_signal(signum)
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return process.returncode, out, err


SLOW_WRITING = """
import netsim.app.outputs
real_csv_text = netsim.app.outputs.csv_text
def slow_csv_text(frame):
    print("MARK writing a table", file=sys.stderr, flush=True)
    time.sleep(0.3)
    return real_csv_text(frame)
netsim.app.outputs.csv_text = slow_csv_text
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_reports_are_written_keeps_the_whole_result(tmp_path, signum):
    """A packet-backend collective interrupted while its reports were written left an empty folder
    (Ctrl-C) or a .tmp and no summary (SIGTERM)."""
    from netsim import load

    out = tmp_path / "out"
    process = patched_netsim(tmp_path, SLOW_WRITING, "collective", "all-reduce", "--size", "16KiB", "--network",
                             "ring-8", "--backend", "garnet", "--out", out, "--quiet")
    status, _, err = signal_at_mark(process, signum)
    assert status == 128 + signum, err
    assert "interrupted after the run had finished; its complete results are written" in err
    result = load(out)
    assert result.summary["partial"] is False and result.summary["collective_time_ns"] > 0
    no_temporary_files(out)


SLOW_IMPORT = """
import importlib.abc
class SlowImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "netsim.app.cli":  # the command's modules are being imported
            print("MARK importing", file=sys.stderr, flush=True)
            time.sleep(60)
        return None
sys.meta_path.insert(0, SlowImport())
"""
SECOND_LOAD = """
import netsim.app.traffic
real_execute = netsim.app.traffic.SynthRun.execute
runs = []
def execute(self):
    runs.append(self)
    if len(runs) == 3:  # a sweep's second load (after the zero-load run and the first load)
        print("MARK mid-sweep", file=sys.stderr, flush=True)
        time.sleep(1)
    return real_execute(self)
netsim.app.traffic.SynthRun.execute = execute
"""
SWEEP = ("synth", "--network", "ring-8", "--pattern", "uniform", "--sweep", "--cycles", "200", "--quiet")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_netsim_imports_is_one_line(tmp_path, signum):
    """Ctrl-C in the first 0.3 s printed a KeyboardInterrupt traceback and exited -2; SIGTERM exited -15."""
    process = patched_netsim(tmp_path, SLOW_IMPORT, *SWEEP, "--out", tmp_path / "out")
    status, out, err = signal_at_mark(process, signum)
    assert status == 128 + signum and err.strip() == "netsim: interrupted" and not out, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("moment", ["mid-sweep", "writing"])
def test_a_signal_during_a_synth_sweep_leaves_a_whole_folder_that_says_what_it_holds(tmp_path, signum, moment):
    """`synth --sweep` stopped between loads keeps the loads measured, marked partial; stopped while
    its reports are written, it writes them whole; either way one line, 130 or 143, no temporary file."""
    from netsim import load

    out = tmp_path / "out"
    process = patched_netsim(tmp_path, SECOND_LOAD if moment == "mid-sweep" else SLOW_WRITING, *SWEEP, "--out", out)
    status, _, err = signal_at_mark(process, signum)
    assert status == 128 + signum and "Traceback" not in err, err
    summary = load(out).summary
    if moment == "mid-sweep":
        assert "partial results written" in err and summary["partial"] is True, err
        assert 1 <= summary["sweep_points"] < 4
    else:
        assert "its complete results are written" in err and summary["partial"] is False, err
    no_temporary_files(out)


def test_a_size_range_stopped_between_sizes_is_partial(tmp_path):
    """A stop after a size had finished ended the range there, but its summary said `partial: false`
    and the command exited 0."""
    from netsim import load

    stop_after_first_size = """
    import netsim.app.runner
    real_run_collective = netsim.app.runner.run_collective
    def run_collective(*args, **kwargs):
        result = real_run_collective(*args, **kwargs)
        print("MARK a size done", file=sys.stderr, flush=True)
        time.sleep(1)
        return result
    netsim.app.runner.run_collective = run_collective
    """
    out = tmp_path / "out"
    process = patched_netsim(tmp_path, stop_after_first_size, "collective", "all-reduce", "--size", "1KiB:4KiB",
                             "--network", "ring-8", "--out", out, "--quiet")
    status, _, err = signal_at_mark(process, signal.SIGINT)
    assert status == 130 and "partial results written" in err, err
    summary = load(out).summary
    assert summary["partial"] is True and (summary["sizes"], summary["sizes_planned"]) == (1, 3)


def test_sigterm_during_set_up_exits_143(tmp_path):
    """It exited 130, as for Ctrl-C."""
    slow_set_up = """
    import netsim.network_plan
    real_create_network = netsim.network_plan.create_network
    def slow_create_network(*args, **kwargs):
        print("MARK building", file=sys.stderr, flush=True)
        time.sleep(60)
        return real_create_network(*args, **kwargs)
    netsim.network_plan.create_network = slow_create_network
    """
    process = patched_netsim(tmp_path, slow_set_up, "collective", "all-reduce", "--size", "16KiB", "--network",
                             "ring-8", "--out", tmp_path / "out", "--quiet")
    status, _, err = signal_at_mark(process, signal.SIGTERM)
    assert status == 143 and err.strip() == "netsim: interrupted", err


def test_a_signal_right_after_a_sweeps_last_point_says_it_finished(tmp_path):
    """It said "interrupted ... rerun to resume" although every point was done."""
    from netsim.app.sweep import read_results

    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    stop_after_last_point = """
    import netsim.app.sweep
    real_record = netsim.app.sweep.SweepState.record
    def record(self, point):
        real_record(self, point)
        if self.done == self.total:
            print("MARK last point", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGINT)
    netsim.app.sweep.SweepState.record = record
    """
    process = patched_netsim(tmp_path, stop_after_last_point, "sweep", study, "--jobs", "1")
    status, out, err = signal_at_mark(process, None)
    assert status == 0 and "interrupted" not in err, err
    assert "3 points: 0 already done, 3 ok, 0 failed" in out
    records = (tmp_path / "study.results.jsonl").read_text().splitlines()
    assert [json.loads(line)["point"] for line in records] == [0, 1, 2]  # rewritten in point order
    assert len(read_results(tmp_path / "study.results.jsonl")) == 3


# ---------------------------------------------------------------------------- 6. the packet backend's set-up budget
@pytest.fixture
def eight_gib(monkeypatch):
    """A machine with 8 GiB available, whatever this one has; building the packet backend's network
    fails the test (the old code built it before any check, then grew for a minute)."""
    from netsim import budget
    from netsim.garnet.network import GarnetNetwork

    def built(*args, **kwargs):
        raise AssertionError("the network was built before the budget refused the run")

    monkeypatch.setattr(budget, "available_memory", lambda: 8 << 30)
    monkeypatch.setattr(GarnetNetwork, "__init__", built)


def test_a_million_npus_are_refused_before_the_topology_is_built(capsys, tmp_path, monkeypatch, eight_gib):
    from netsim.network_config import NetworkConfig

    def built(self):
        raise AssertionError("the topology was built before the budget refused the run")

    monkeypatch.setattr(NetworkConfig, "build_topology", built)
    network = tmp_path / "big.toml"
    network.write_text('backend = "garnet"\n[topology]\nkind = "torus"\ndims = [1000, 1000]\nbandwidth = "50GB/s"\n'
                       'latency = "500ns"\n')
    status, err = netsim(capsys, "collective", "all-reduce", "--size", "1KiB", "--network", network, "--out",
                         tmp_path / "o")
    assert status == 2 and "1,000,000 NPUs" in err and "more than the 8GiB available" in err, err


@pytest.mark.parametrize("setting, found", [(["--set", "garnet.vcs=1000000000"], "32,000,000,000 VCs"),
                                            (["--size", str(2**60)], "packets in the largest message")])
def test_packet_backend_state_and_a_huge_message_are_refused_before_building(capsys, tmp_path, eight_gib, setting,
                                                                             found):
    """garnet.vcs = 1e9 or a 1 EiB message grew to 6 GB in 40-70 s before anything was refused."""
    argv = ["collective", "all-reduce", "--size", "1KiB", "--network", "ring-8", "--backend", "garnet", "--out",
            tmp_path / "o", *setting]
    status, err = netsim(capsys, *argv)
    assert status == 2 and found in err and "more than the 8GiB available" in err, err
    assert len(err.strip().splitlines()) == 1


def test_synthetic_traffic_is_refused_before_building_too(capsys, tmp_path, eight_gib):
    status, err = netsim(capsys, "synth", "--pattern", "uniform", "--rate", "0.1", "--network", "ring-8", "--set",
                         "garnet.vcs=1000000000", "--out", tmp_path / "o")
    assert status == 2 and "VCs" in err, err


@pytest.mark.parametrize("network", ["torus-4x4", "switch-16", "dgx-8x4"])
@pytest.mark.parametrize("garnet", [{}, {"nic_ports": "single", "vcs": 6}])
def test_the_packet_state_counted_before_building_is_what_the_backend_builds(network, garnet):
    from netsim.garnet.network import GarnetNetwork
    from netsim.garnet.plan import PacketPlan
    from netsim.network_config import load_network

    config = load_network(network, [(["garnet", key], value) for key, value in garnet.items()], "garnet")
    topology = config.build_topology()
    built = GarnetNetwork(topology, config=config)
    counted = PacketPlan(config, topology).state(10**6)
    ports = [port for router in built.routers for port in router.inputs]
    assert counted == {"ports": len(ports), "vcs": sum(len(port.vcs) for port in ports),
                       "message_packets": -(-10**6 // built.packet_bytes)}
    assert config.npus == topology.npus


# ---------------------------------------------------------------------------- 7. a shareable copy
def test_report_share_writes_a_copy_with_relative_input_paths(capsys, tmp_path, monkeypatch):
    """summary.json records the inputs' absolute paths (kept); --share writes a copy without them."""
    from netsim import load

    work = tmp_path / "work"
    (work / "nets").mkdir(parents=True)
    inside = work / "nets" / "ring.toml"
    inside.write_text('[topology]\nkind = "torus"\ndims = [8]\nbandwidth = "50GB/s"\nlatency = "500ns"\n')
    elsewhere = tmp_path / "elsewhere" / "my-ring.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(inside.read_text())
    monkeypatch.chdir(work)
    for network, shared in ((inside, "nets/ring.toml"), (elsewhere, "my-ring.toml")):
        run, copy = work / f"run-{network.stem}", work / f"copy-{network.stem}"
        status, err = netsim(capsys, "run", "--network", network, "--workload", "microAllReduce", "--out", run,
                             "--quiet")
        assert status == 0, err
        assert load(run).summary["network"]["path"] == str(network)  # the original keeps its absolute paths
        status, err = netsim(capsys, "report", run, "--share", copy)
        assert status == 0, err
        summary = load(copy).summary  # a whole folder, as report reads it
        assert summary["network"]["path"] == shared
        assert summary["workload"]["path"] == "workload/data/microAllReduce.txt"  # bundled: in netsim's install
        text = (copy / "summary.json").read_text()
        assert str(tmp_path) not in text and '"/' not in text
        for name in summary["files"]:
            assert (copy / name).read_bytes() == (run / name).read_bytes()
        status, err = netsim(capsys, "report", run, "--share", copy)
        assert status == 2 and "already exists" in err
