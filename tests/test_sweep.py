"""`netsim sweep`: expansion, seeds, failures, resume after a kill, and the same results on Dask."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from netsim.errors import ConfigError
from netsim.sweep import load_study, point_argv, results_frame, run_study

STUDY = """
seed = 3
[base]
command = "collective"
kind = "all-reduce"
network = "torus-4x4"
backend = "garnet"
[grid]
size = ["2KiB", "16KiB"]
"garnet.buffer_flits" = [2, 4, 8]
[zip]
algorithm = ["ring", "direct"]
"garnet.vcs" = [2, 4]
"""


def write_study(folder, text=STUDY, name="study.toml"):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_expansion_seeds_and_command_lines(tmp_path):
    study = load_study(write_study(tmp_path))
    assert len(study.points) == 12
    first = study.points[0]
    assert first.varied == {"size": "2KiB", "garnet.buffer_flits": 2, "algorithm": "ring", "garnet.vcs": 2}
    assert point_argv(first) == ["collective", "all-reduce", "--network", "torus-4x4", "--backend", "garnet",
                                 "--size", "2KiB", "--set", "garnet.buffer_flits=2", "--algorithm", "ring",
                                 "--set", "garnet.vcs=2", "--seed", str(first.seed), "--quiet"]
    assert len({p.seed for p in study.points}) == 12 and len({p.key for p in study.points}) == 12
    assert [p.seed for p in load_study(write_study(tmp_path / "again")).points] == [p.seed for p in study.points]
    with pytest.raises(ConfigError, match="different lengths"):
        load_study(write_study(tmp_path, STUDY.replace('"garnet.vcs" = [2, 4]', '"garnet.vcs" = [2]'), "bad.toml"))


@pytest.mark.parametrize("text, message", [
    ('base = "run"\n', r"bad.toml:1: key 'base': expected a table, got 'run'"),
    ('[base]\ncommand = "run"\n[grid]\npasses = 3\n', r"key 'grid.passes': expected a non-empty list"),
    ('results = 5\n[base]\ncommand = "run"\n', r"key 'results': expected a file name, got 5"),
    ('[base]\ncommand = "train"\n', r"key 'base.command': expected one of"),
])
def test_malformed_study_files_give_one_line_errors(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message) as info:
        load_study(write_study(tmp_path, text, "bad.toml"))
    assert "\n" not in str(info.value)


def test_failing_point_is_recorded_and_the_sweep_goes_on(tmp_path):
    path = write_study(tmp_path, STUDY.replace('size = ["2KiB", "16KiB"]', 'size = ["2KiB", "lots"]')
                       .replace('"garnet.buffer_flits" = [2, 4, 8]', '"garnet.buffer_flits" = [4]'))
    counts = run_study(load_study(path), jobs=2)
    assert counts == {"points": 4, "skipped": 0, "failed": 2, "ok": 2, "interrupted": False,
                      "results": str(tmp_path / "study.results.jsonl")}
    frame = results_frame(tmp_path / "study.results.jsonl")
    assert list(frame["status"]) == ["ok", "ok", "error", "error"]
    assert frame["error"].iloc[2].startswith("--size: ") and "\n" not in frame["error"].iloc[2]
    assert (frame["collective_time_ns"].iloc[:2] > 0).all()


def netsim_command():
    exe = shutil.which("netsim")
    return [exe] if exe else [sys.executable, "-m", "netsim.cli"]


def test_killed_sweep_resumes_to_the_same_file_whatever_the_workers(tmp_path):
    reference = write_study(tmp_path / "reference")
    assert run_study(load_study(reference), jobs=1)["ok"] == 12
    expected = (tmp_path / "reference" / "study.results.jsonl").read_text()

    killed = write_study(tmp_path / "killed")
    results = tmp_path / "killed" / "study.results.jsonl"
    process = subprocess.Popen([*netsim_command(), "sweep", str(killed), "--jobs", "2", "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if results.is_file() and len(results.read_text().splitlines()) >= 3:
            break
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)  # the sweep and its workers, mid-flight
    process.wait()
    done = len(results.read_text().splitlines())
    assert 3 <= done < 12
    counts = run_study(load_study(killed), jobs=2)
    assert counts["skipped"] == done and counts["ok"] == 12
    assert results.read_text() == expected


def test_dask_cluster_gives_the_local_results(tmp_path):
    distributed = pytest.importorskip("distributed")
    local = write_study(tmp_path / "local", STUDY.replace('"garnet.buffer_flits" = [2, 4, 8]',
                                                          '"garnet.buffer_flits" = [4]'))
    run_study(load_study(local), jobs=2)
    remote = write_study(tmp_path / "dask", local.read_text())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        result = subprocess.run([*netsim_command(), "sweep", str(remote), "--scheduler", cluster.scheduler_address,
                                 "--json"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["ok"] == 4
    assert (tmp_path / "dask" / "study.results.jsonl").read_text() == \
        (tmp_path / "local" / "study.results.jsonl").read_text()
