"""`netsim sweep`: expansion, seeds, failures, resume after a kill, and the same results on Dask."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from netsim.app.cli import main
from netsim.errors import ConfigError
from netsim.app.study import load_study, point_argv
from netsim.app.sweep import as_record, results_frame, run_study
from tests.helpers import netsim_command

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


SETTING_TWICE = '[base]\ncommand = "collective"\nkind = "all-reduce"\nnetwork = "ring-8"\nsize = "1KiB"\n'


@pytest.mark.parametrize("tables, message", [
    ('[grid]\n"topology.bandwidth" = ["10GB/s"]\n"network.topology.bandwidth" = ["40GB/s"]\n',
     r"key 'grid.network.topology.bandwidth': sets 'topology.bandwidth' again \(also as 'grid.topology.bandwidth'\)"),
    ('[grid]\n"topology.bandwidth" = ["10GB/s", "20GB/s"]\n[zip]\n"topology.bandwidth" = ["10GB/s", "20GB/s"]\n',
     r"key 'zip.topology.bandwidth': sets 'topology.bandwidth' again \(also as 'grid.topology.bandwidth'\)"),
    ('[grid]\n"endpoint-delay" = [1]\n"system.endpoint-delay" = [2]\n', r"sets 'endpoint-delay' again"),
    ('[grid]\npacket_flits = [1]\n"packet-flits" = [2]\n', r"sets 'packet-flits' again"),
])
def test_a_setting_varied_twice_is_a_one_line_error(tmp_path, tables, message):
    """Two values for one setting would reach the command line as two options, the last winning,
    while the results recorded both: refused, whatever the spelling."""
    with pytest.raises(ConfigError, match=message) as info:
        load_study(write_study(tmp_path, SETTING_TWICE + tables, "twice.toml"))
    assert "\n" not in str(info.value)


def test_a_varied_setting_overrides_its_base_value_under_any_spelling(tmp_path):
    study = load_study(write_study(tmp_path, SETTING_TWICE + '"network.topology.bandwidth" = "40GB/s"\n'
                                   '[grid]\n"topology.bandwidth" = ["10GB/s", "20GB/s"]\n'))
    assert [point_argv(p)[-5:-3] for p in study.points] == [["--set", "topology.bandwidth=10GB/s"],
                                                          ["--set", "topology.bandwidth=20GB/s"]]
    assert all("network.topology.bandwidth=40GB/s" not in point_argv(p) for p in study.points)


def test_failing_point_is_recorded_and_the_sweep_goes_on(tmp_path):
    path = write_study(tmp_path, STUDY.replace('size = ["2KiB", "16KiB"]', 'size = ["2KiB", "lots"]')
                       .replace('"garnet.buffer_flits" = [2, 4, 8]', '"garnet.buffer_flits" = [4]'))
    counts = run_study(load_study(path), jobs=2)
    assert counts == {"points": 4, "skipped": 0, "failed": 2, "ok": 2, "interrupted": False, "stop_signal": None,
                      "results": str(tmp_path / "study.results.jsonl")}
    frame = results_frame(tmp_path / "study.results.jsonl")
    assert list(frame["status"]) == ["ok", "ok", "error", "error"]
    assert frame["error"].iloc[2].startswith("--size: ") and "\n" not in frame["error"].iloc[2]
    assert (frame["collective_time_ns"].iloc[:2] > 0).all()


SMALL = """
[base]
command = "collective"
kind = "all-reduce"
network = "ring-8"
[grid]
size = ["1KiB", "2KiB"]
"""
RECORD_KEYS = "a JSON object with keys point, key, params, seed, status (one per line, as netsim sweep writes them)"


@pytest.mark.parametrize("lines, message", [
    (["FIRST", "[1, 2]"], "study.results.jsonl:2: expected a sweep point's record, " + RECORD_KEYS + ", got '[1, 2]'"),
    (["not json", "FIRST"],
     "study.results.jsonl:1: expected a sweep point's record, " + RECORD_KEYS + ", got 'not json'"),
    (['{"key": "k", "point": 0}'], "study.results.jsonl:1: expected a sweep point's record, " + RECORD_KEYS +
     """, got '{"key": "k", "point": 0}'"""),
])
def test_results_file_with_a_line_that_is_no_record_is_a_one_line_error(tmp_path, capsys, lines, message):
    path = write_study(tmp_path, SMALL)
    results = tmp_path / "study.results.jsonl"
    assert run_study(load_study(path), jobs=1)["ok"] == 2
    first = results.read_text().splitlines()[0]
    results.write_text("".join(first + "\n" if line == "FIRST" else line + "\n" for line in lines))
    assert main(["sweep", str(path), "--jobs", "1", "--quiet"]) == 2
    assert capsys.readouterr().err == f"netsim: error: {tmp_path}/{message}\n"


@pytest.mark.parametrize("results, message", [
    ("out", "out: is a folder, expected a file"),
    ("study.toml/out.jsonl", "study.toml:1: key 'results': expected a file name in the study's folder, got "
                             "'study.toml/out.jsonl' (results stay beside the study)"),
    ("../out.jsonl", "study.toml:1: key 'results': expected a file name in the study's folder, got "
                     "'../out.jsonl' (results stay beside the study)"),
])
def test_results_path_that_cannot_be_a_results_file_is_a_one_line_error(tmp_path, capsys, results, message):
    path = write_study(tmp_path, f'results = "{results}"\n' + SMALL)
    (tmp_path / "out").mkdir()
    assert main(["sweep", str(path), "--jobs", "1", "--quiet"]) == 2
    assert capsys.readouterr().err == f"netsim: error: {tmp_path}/{message.format(folder=tmp_path)}\n"


def test_a_torn_last_line_is_cut_off_and_the_sweep_resumes(tmp_path):
    reference = write_study(tmp_path / "reference", SMALL)
    run_study(load_study(reference), jobs=1)
    expected = (tmp_path / "reference" / "study.results.jsonl").read_text()
    path = write_study(tmp_path / "torn", SMALL)
    results = tmp_path / "torn" / "study.results.jsonl"
    results.write_text(expected.splitlines()[0] + "\n" + expected.splitlines()[1][:25])  # killed mid-write
    assert run_study(load_study(path), jobs=1) == {"points": 2, "skipped": 1, "failed": 0, "ok": 2,
                                                   "interrupted": False, "stop_signal": None,
                                                   "results": str(results)}
    assert results.read_text() == expected


def test_point_with_a_bad_option_records_one_line_and_prints_no_usage(tmp_path):
    path = write_study(tmp_path, SMALL.replace('size = ["1KiB", "2KiB"]',
                                               'size = ["1KiB"]\nbackend = ["analytical", "photonic"]'))
    result = subprocess.run([*netsim_command(), "sweep", str(path), "--jobs", "2", "--quiet"], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 1
    results = tmp_path / "study.results.jsonl"
    assert result.stderr == (f"netsim: 1 of 2 points failed (their errors are in {results}; "
                             f"a rerun retries them)\n")
    frame = results_frame(results)
    assert list(frame["status"]) == ["ok", "error"]
    assert frame["error"].iloc[1].startswith("argument --backend: invalid choice: 'photonic'")
    assert "\n" not in frame["error"].iloc[1]


def test_jobs_below_one_is_a_one_line_error(tmp_path, capsys):
    assert main(["sweep", str(write_study(tmp_path, SMALL)), "--jobs", "0", "--quiet"]) == 2
    assert capsys.readouterr().err == "netsim: error: --jobs: expected a whole number >= 1, got 0\n"


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


SLOW = """
[base]
command = "collective"
kind = "all-reduce"
size = "64MiB"
backend = "garnet"
[grid]
"garnet.vcs" = [2, 4, 6, 8]
"""


def children(pid: int) -> list[int]:
    """Processes whose parent is `pid` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def started_sweep(tmp_path, text=SLOW, jobs="2", first_line="progress"):
    """A sweep under way in its own session, with its workers (their pids), after its first progress
    line (which must contain `first_line`: a million-point study said nothing before expanding it all)."""
    path = write_study(tmp_path, text)
    process = subprocess.Popen([*netsim_command(), "sweep", str(path), "--jobs", jobs], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert first_line in process.stderr.readline()
    deadline = time.monotonic() + 30
    while len(children(process.pid)) < int(jobs) and time.monotonic() < deadline:
        time.sleep(0.05)
    return process, children(process.pid)


def kill_group(pid: int) -> None:
    """End what is left of a process group this test started."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def gone_within(pids, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(alive(pid) for pid in pids)


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_sweep_ends_its_workers_and_keeps_what_finished(tmp_path, signum, status):
    """Ctrl-C reaches the whole process group (as from a terminal); SIGTERM only the sweep, which
    left its workers alive before."""
    process, workers = started_sweep(tmp_path)
    try:
        assert len(workers) == 2
        if signum == signal.SIGINT:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        _stdout, stderr = process.communicate(timeout=20)
    finally:
        kill_group(process.pid)
    assert process.returncode == status, stderr
    assert "Traceback" not in stderr and "interrupted; finished points are in" in stderr
    assert gone_within(workers, 20)
    assert all(as_record(line) for line in (tmp_path / "study.results.jsonl").read_text().splitlines())


def test_workers_of_a_killed_sweep_exit_by_themselves(tmp_path):
    """SIGKILL leaves no chance to clean up: the workers notice their parent is gone."""
    process, workers = started_sweep(tmp_path)
    process.kill()
    process.wait()  # not communicate(): workers that live on would hold its pipes open
    try:
        assert len(workers) == 2 and gone_within(workers, 20)
    finally:
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_million_point_study_shows_progress_at_once_and_stops_at_ctrl_c(tmp_path):
    values = ", ".join(str(v) for v in range(1, 1001))
    text = f'[base]\ncommand = "collective"\nkind = "all-reduce"\nsize = "1KiB"\n[grid]\n"endpoint-delay" = [{values}]\n' \
           f'"preferred-dataset-splits" = [{values}]\n'
    process, _workers = started_sweep(tmp_path, text, jobs="1", first_line="0/1,000,000 points")
    try:
        time.sleep(1)
        os.killpg(process.pid, signal.SIGINT)
        _stdout, stderr = process.communicate(timeout=10)
    finally:
        kill_group(process.pid)
    assert process.returncode == 130 and "Traceback" not in stderr


def test_a_results_file_of_another_study_is_never_written_over(tmp_path, capsys):
    first = write_study(tmp_path, 'results = "shared.jsonl"\n' + SMALL, "first.toml")
    assert run_study(load_study(first), jobs=1)["ok"] == 2
    before = (tmp_path / "shared.jsonl").read_text()
    second = write_study(tmp_path, 'results = "shared.jsonl"\n' + SMALL.replace('"2KiB"]', '"4KiB"]'), "second.toml")
    assert main(["sweep", str(second), "--jobs", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds 1 record(s) of points not in this study" in err
    assert (tmp_path / "shared.jsonl").read_text() == before


def test_paths_in_a_study_are_relative_to_the_study_file_not_the_current_folder(tmp_path, monkeypatch):
    """A study's network file beside it (16 NPUs) is the one run, though the current folder holds
    another file of that name (4 NPUs): the sweep once ran the current folder's."""
    torus = '[topology]\nkind = "torus"\ndims = {dims}\nbandwidth = "50GB/s"\nlatency = "500ns"\n'
    write_study(tmp_path / "studydir", torus.format(dims="[4, 4]"), "net.toml")
    path = write_study(tmp_path / "studydir", SMALL.replace('"ring-8"', '"net.toml"').replace('"2KiB"', ""))
    (tmp_path / "net.toml").write_text(torus.format(dims="[4]"))
    monkeypatch.chdir(tmp_path)
    assert run_study(load_study(Path("studydir/study.toml")), jobs=1)["ok"] == 1
    (record,) = [json.loads(line) for line in (tmp_path / "studydir" / "study.results.jsonl").read_text().splitlines()]
    assert record["result"]["npus"] == 16 and record["params"] == {"size": "1KiB"}


@pytest.mark.parametrize("tables, message", [
    ('network = "net.toml"\n', "key 'base.network': 'net.toml' is no file or folder relative to the study's folder"),
    ('[grid]\nsystem = ["default", "sys.json"]\n', "key 'grid.system': 'sys.json' is no file or folder"),
    ('sizee = "1KiB"\n', "study.toml:5: key 'base.sizee': not an option of netsim collective nor a config key"),
    ('[zip]\n"garnet.vcz" = [1, 2]\n', "key 'zip.garnet.vcz': not an option of netsim collective nor a config key"),
])
def test_a_bad_key_or_missing_file_in_a_study_is_refused_before_any_point_runs(tmp_path, capsys, monkeypatch, tables,
                                                                              message):
    """A missing file or an unknown key is refused once, before any point runs (it once failed every
    point with exit 1, or ran on a file of that name in the current folder)."""
    (tmp_path / "net.toml").write_text("")  # in the current folder, not the study's
    monkeypatch.chdir(tmp_path)
    path = write_study(tmp_path / "studydir", STUDY_HEAD + tables)
    assert main(["sweep", str(path), "--jobs", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "studydir" / "study.results.jsonl").exists()


STUDY_HEAD = '[base]\ncommand = "collective"\nkind = "all-reduce"\nsize = "1KiB"\n'


def test_a_scheduler_nobody_listens_on_is_the_only_line(tmp_path, capsys):
    """The progress line came before the error (two lines): now the error alone (issue 28, item 10;
    without Dask installed the error is that it is needed)."""
    path = write_study(tmp_path, SMALL)
    assert main(["sweep", str(path), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("netsim: error: --scheduler"), err


def test_a_results_file_that_cannot_be_written_is_the_only_line(tmp_path, capsys, monkeypatch):
    """As in a read-only folder (which root, running the tests, could write anyway)."""
    import netsim.app.sweep

    def read_only(path):
        raise ConfigError(f"{path}: cannot write the results file (Read-only file system)")

    monkeypatch.setattr(netsim.app.sweep, "open_results", read_only)
    path = write_study(tmp_path, SMALL)
    assert main(["sweep", str(path), "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err == f"netsim: error: {tmp_path / 'study.results.jsonl'}: cannot write the results file (Read-only file system)\n"
