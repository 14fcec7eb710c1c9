"""A sweep keeps each point's output folder and shows the running points' own progress (issue 29,
items 2 and 3)."""

import json
import subprocess

import pytest

from netsim.errors import ConfigError
from netsim.app.study import load_study
from netsim.app.sweep import SweepState, results_frame, run_study
from tests.helpers import netsim_command

STUDY = """
[base]
command = "collective"
kind = "all-reduce"
size = "{size}"
network = "torus-4x4"
backend = "garnet"
[grid]
"garnet.buffer_flits" = [2, 8]
"""


class Recorder:
    """A view that keeps every snapshot it is shown."""

    period = 0.0

    def __init__(self):
        self.snapshots = []

    def update(self, snapshot):
        self.snapshots.append(snapshot)

    def note(self, text):
        pass

    def close(self):
        pass


def test_each_point_keeps_its_output_folder_and_report_reads_it(tmp_path):
    study_file = tmp_path / "buffers.toml"
    study_file.write_text(STUDY.format(size="64KiB"))
    counts = run_study(load_study(study_file), jobs=1)
    assert counts["ok"] == 2
    frame = results_frame(tmp_path / "buffers.results.jsonl")
    assert list(frame["folder"]) == ["buffers.points/p0+buffer_flits=2", "buffers.points/p1+buffer_flits=8"]
    for folder in frame["folder"]:
        point = tmp_path / folder
        assert {"summary.json", "links.csv", "vcs.csv", "link_timeseries.csv"} <= {p.name for p in point.iterdir()}
        assert not (point / ".progress").exists()
        report = subprocess.run([*netsim_command(), "report", str(point), "--json"], capture_output=True, text=True,
                                timeout=120)
        assert report.returncode == 0, report.stderr
        assert json.loads(report.stdout)["backend"] == "garnet"
    times = frame.set_index("garnet.buffer_flits")["collective_time_ns"]
    assert times[2] > times[8]  # the folders hold different runs


def test_out_names_the_points_folder_and_is_no_point_setting(tmp_path):
    study_file = tmp_path / "s.toml"
    study_file.write_text('out = "pts"\n' + STUDY.format(size="4KiB"))
    assert load_study(study_file).folders == tmp_path / "pts"
    study_file.write_text(STUDY.format(size="4KiB").replace('backend = "garnet"', 'backend = "garnet"\nout = "x"'))
    with pytest.raises(ConfigError, match="base.out.*top level"):
        load_study(study_file)


def test_progress_counts_the_running_points_share(tmp_path):
    state = SweepState(Recorder(), total=4, skipped=1)
    running = tmp_path / "p1"
    running.mkdir()
    (running / ".progress").write_text("0.5")
    state.running = [("p1", running), ("p2", tmp_path / "p2")]  # p2 not started: no file yet
    state.refresh(force=True)
    snapshot = state.view.snapshots[-1]
    assert snapshot.fraction == pytest.approx((1 + 0.5) / 4)
    assert snapshot.eta_fraction == pytest.approx(0.5 / 3)  # the skipped point took no time in this run
    assert "running p1 50%" in snapshot.text and "p2" not in snapshot.text


def test_the_view_moves_while_the_first_points_run(tmp_path):
    study_file = tmp_path / "slow.toml"
    # points of two seconds of run on the compiled core: a point writes its progress a second into its
    # run (ProgressFile.period), and 16 MiB points, 1.4 s, once ended too soon after it in CI
    study_file.write_text(STUDY.format(size="64MiB"))
    view = Recorder()
    view.period = 0.1
    run_study(load_study(study_file), jobs=2, view=view)
    before_any_finished = [s for s in view.snapshots if s.text.startswith("0/2 points")]
    assert any(0 < s.fraction < 1 and "running p" in s.text for s in before_any_finished)
