"""What a run reports means what it says: oversubscribed links are flagged, interrupted runs are
marked, and every column of end_to_end.csv and detailed.csv keeps its documented meaning."""

import json
import signal
import subprocess
from pathlib import Path

import pytest

from netsim.analytical import AnalyticalNetwork
from netsim.network_config import load_network
from netsim.app.progress import RunMonitor
from netsim.app.runner import run_collective
from system import load_system
from tests.helpers import netsim_command
from tests.app.test_cli import netsim


def test_oversubscribed_analytical_links_are_flagged_and_packet_links_never_exceed_one():
    system = load_system("default")
    flat = run_collective(load_network("ring-16"), system, "all-reduce", 64 * 2**20)
    direct = run_collective(load_network("ring-16"), load_system("default", [(["all-reduce-implementation"], "direct")]),
                            "all-reduce", 64 * 2**20)
    assert flat.summary["max_link_utilization"] <= 1.0 and flat.summary["warnings"] == []
    s = direct.summary
    links = direct.tables["links"]
    assert s["max_link_utilization"] == pytest.approx(links["utilization"].max()) and s["max_link_utilization"] > 25
    busiest = links.loc[s["max_link_utilization_link"]]
    assert busiest["utilization"] == s["max_link_utilization"]
    (warning,) = s["warnings"]
    # it names the worst link: over the run, or over one sampling interval when that is worse
    series = direct.tables["link_timeseries"].sort_values(["link_id", "time_ns"])
    rate = series.groupby("link_id")["busy_time_ns"].diff() / series.groupby("link_id")["time_ns"].diff()
    worst = links.loc[series.loc[rate.idxmax(), "link_id"]] if rate.max() > s["max_link_utilization"] else busiest
    assert s["peak_interval_link_utilization"] == pytest.approx(max(rate.max(), 0))
    assert f"link {worst['src']}->{worst['dst']} (id {worst['link_id']}," in warning
    assert "--backend congestion-aware or garnet" in warning
    aware = run_collective(load_network("ring-16", backend="congestion-aware"),
                           load_system("default", [(["all-reduce-implementation"], "direct")]), "all-reduce", 64 * 2**20)
    assert 0 < aware.summary["max_link_utilization"] <= 1.0 and aware.summary["warnings"] == []
    packet = run_collective(load_network("ring-16", backend="garnet"), system, "all-to-all", 64 * 1024)
    assert 0 < packet.summary["max_link_utilization"] <= 1.0 and packet.summary["warnings"] == []


def test_the_command_line_flags_the_table_and_prints_the_warning(tmp_path):
    """The table flags the busiest link; the warning is one line on stderr, as every netsim warning
    (the table or the JSON stay on stdout), and none with --quiet (summary.json keeps it)."""
    shown = netsim("collective", "all-reduce", "--size", "64MiB", "--network", "ring-16", "--algorithm", "direct",
                   "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "max link utilization" in shown.stdout and "OVER 1" in shown.stdout and "oversubscribed" not in shown.stdout
    warning = [line for line in shown.stderr.splitlines() if line.startswith("netsim: warning:")]
    assert len(warning) == 1 and "oversubscribed" in warning[0]
    as_json = netsim("collective", "all-reduce", "--size", "64MiB", "--network", "ring-16", "--algorithm", "direct",
                     "--json", "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert json.loads(as_json.stdout)["max_link_utilization"] > 1 and "netsim: warning: link" in as_json.stderr
    quiet = netsim("collective", "all-reduce", "--size", "64MiB", "--network", "ring-16", "--algorithm", "direct",
                   "--quiet", "--out", str(tmp_path / "q"), cwd=tmp_path)
    assert quiet.stdout == "" and "warning" not in quiet.stderr
    assert json.loads((tmp_path / "q" / "summary.json").read_text())["warnings"]
    report = netsim("report", str(tmp_path / "o"), cwd=tmp_path)
    assert "netsim: warning: link" in report.stderr


def test_analytical_counters_sampled_mid_message_hold_only_what_has_crossed():
    """A message is charged to its links as it serializes, so a sampling interval never sees more
    than a link can carry (the default run's time series went above 1 when a message counted whole
    at its send time); the final totals are the whole messages."""
    config = load_network("ring-8")
    network = AnalyticalNetwork(config.build_topology())
    network.next_counter_read = 250.0  # as a sampler sets it: the counters are read next at 250 ns
    nbytes = 50_000  # 1000 ns at 50 GB/s, then 500 ns of latency
    network.endpoint(0).send(2, nbytes, "m")
    network.endpoint(2).recv(0, nbytes, "m")
    network.env.run(until=250.0)
    link_bytes, busy = network.link_counters()
    first, second = (network.topology.link(u, v).id for u, v in ((0, 1), (1, 2)))
    assert link_bytes[first] == link_bytes[second] == pytest.approx(nbytes / 4)
    assert busy[first] == pytest.approx(250.0)
    network.run()
    link_bytes, busy = network.link_counters()
    assert link_bytes[first] == nbytes and busy[first] == pytest.approx(1000.0)
    assert list(network.link_stats()["bytes"]) == link_bytes


def test_the_default_run_stays_within_its_links_in_every_interval(tmp_path):
    shown = netsim("run", "--json", "--out", str(tmp_path / "o"), cwd=tmp_path)
    s = json.loads(shown.stdout)
    assert 0.5 < s["max_link_utilization"] <= s["peak_interval_link_utilization"] <= 1.0 and s["warnings"] == []


class StopAfter(RunMonitor):
    """Stops the run at its `checks`-th check, as a Ctrl-C would."""

    stride = 16

    def __init__(self, checks: int):
        super().__init__()
        self.left = checks

    def check(self, network):
        self.left -= 1
        return self.left <= 0 or super().check(network)


def test_an_interrupted_collective_reports_no_time_or_bandwidth_and_keeps_its_phases():
    result = run_collective(load_network("torus-4x4", backend="garnet"), load_system("default"), "all-reduce",
                            1 << 20, monitor=StopAfter(20))
    s = result.summary
    assert s["partial"] is True and s["npus_finished"] < s["npus"] == 16
    assert s["collective_time_ns"] is None and s["algbw_GBps"] is None and s["busbw_GBps"] is None
    phases = result.tables["detailed"]
    assert set(phases["npu"]) == set(range(16))
    assert phases["finished_at_ns"].isna().any() and (phases["finished_at_ns"].dropna() <= s["simulated_time_ns"]).all()
    assert (phases["network_delay_ns"].dropna() >= 0).all()


def test_every_npu_has_its_phases_so_a_rooted_collective_shows_more_than_the_root(tmp_path):
    """The broadcast's root (NPU 0) is done once it has sent; the leaves wait the whole time."""
    result = run_collective(load_network("ring-8"), load_system("default"), "broadcast", 1 << 20)
    phases = result.tables["detailed"]
    root, others = phases[phases["npu"] == 0], phases[phases["npu"] != 0]
    assert len(others) == 7 * len(root)
    assert others["finished_at_ns"].max() == pytest.approx(result.summary["collective_time_ns"])
    assert root["network_delay_ns"].max() < 0.1 * others["network_delay_ns"].max()


def test_ctrl_c_on_a_collective_prints_partial_and_no_bandwidth(tmp_path):
    process = subprocess.Popen([*netsim_command(), "collective", "all-reduce", "--size", "1GiB", "--backend", "garnet",
                                "--out", str(tmp_path / "c")], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert "progress" in process.stderr.readline()
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert "PARTIAL" in stdout and "n/a (unfinished)" in stdout and "GB/s" not in stdout.split("link utilization")[0]
    summary = json.loads((tmp_path / "c" / "summary.json").read_text())
    assert summary["partial"] is True and summary["algbw_GBps"] is None
    assert (tmp_path / "c" / "detailed.csv").is_file()


def test_exposed_communication_never_exceeds_the_communication_and_updates_are_their_own_column():
    """ResNet-50's conv1 showed 21,035.9 ns exposed of 17,806.9 ns total: the rest was the weight update."""
    from netsim.app.runner import run_training
    from workload import load_workload

    result = run_training(load_network("torus-4x4"), load_system("default"), load_workload("Resnet50_DataParallel"))
    e2e = result.tables["end_to_end"]
    for phase in ("fwd", "ig", "wg"):
        assert (e2e[f"{phase}_exposed_comm_ns"] <= e2e[f"{phase}_total_comm_ns"] + 1e-6).all()
    conv1 = e2e.iloc[0]
    assert conv1["wg_exposed_update_ns"] > 0
    assert conv1["wg_exposed_comm_ns"] + conv1["wg_exposed_update_ns"] == pytest.approx(21035.9, abs=0.1)
    s = result.summary
    blocked = e2e[[c for c in e2e.columns if "_exposed_" in c]].to_numpy().sum()
    assert s["exposed_comm_time_ns"] == pytest.approx(blocked)  # ASTRA-sim's figure: collective and update


def test_a_full_disk_leaves_no_table_cut_mid_row_beside_a_summary(tmp_path, monkeypatch):
    """Tables go to temporary files renamed into place, summary.json last: a write that fails leaves
    a folder `netsim report` refuses, not a cut CSV beside "partial": false."""
    import errno

    from netsim.app import outputs
    from netsim.errors import ConfigError

    result = run_collective(load_network("ring-8"), load_system("default"), "all-reduce", 4096)
    out = tmp_path / "o"
    outputs.write_outputs(dict(result.summary), result.tables, out)  # an earlier, whole run in the folder
    real_open = open

    def full_disk(file, mode="r", *args, **kwargs):
        stream = real_open(file, mode, *args, **kwargs)
        if "w" in mode and Path(file).name.startswith(".links.csv"):
            stream.write("link_id,src")  # the disk took part of it
            stream.close()
            raise OSError(errno.ENOSPC, "No space left on device", str(file))
        return stream

    monkeypatch.setattr("builtins.open", full_disk)
    with pytest.raises(ConfigError, match=r"links.csv: cannot write the output folder .* \(No space left on device\)"):
        outputs.write_outputs(dict(result.summary), result.tables, out)
    assert not (out / "summary.json").exists() and not list(out.glob(".*.tmp"))
    with pytest.raises(ConfigError, match="not a netsim output folder"):
        outputs.load_output(out)


def test_names_from_config_files_stay_one_folder_under_netsim_out(tmp_path):
    """A network named "../../escaped" placed the output folder outside the working directory."""
    net = tmp_path / "net.toml"
    net.write_text('name = "../../escaped"\n[topology]\nkind = "torus"\ndims = [4]\nbandwidth = "50GB/s"\n'
                   'latency = "500ns"\n')
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    shown = netsim("collective", "all-reduce", "--size", "1KiB", "--network", str(net), "--quiet", cwd=work)
    assert shown.returncode == 0, shown.stderr
    (folder,) = (work / "netsim-out").iterdir()
    assert folder.name == "all-reduce-1024B-.._.._escaped" and (folder / "summary.json").is_file()
    assert not (tmp_path / "escaped").exists()


def test_a_runaway_packet_collective_is_warned_about_before_it_runs():
    """10^11 bytes on the packet backend (hours of work, though it fits in memory; 10^18 bytes no
    longer fits: test_output_faults): the estimate of its work comes first, in the progress view and
    in the summary's warnings."""
    monitor = StopAfter(1)
    noted = []
    monitor.view.note = noted.append
    result = run_collective(load_network("torus-4x4", backend="garnet"), load_system("default"), "all-reduce",
                            10**11, monitor=monitor)
    assert len(noted) == 1 and "flit-hops: up to" in noted[0] and " h at the packet backend" in noted[0]
    assert noted[0] in result.summary["warnings"] and result.summary["partial"] is True
