"""`netsim` end to end in a subprocess from a temporary directory, as a user runs it."""

import csv
import json
import re
import subprocess

import pandas as pd
import pytest

from tests.helpers import netsim_command


def netsim(*args, cwd):
    return subprocess.run([*netsim_command(), *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_run_with_no_arguments_writes_the_reports(tmp_path):
    result = netsim("run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (out,) = (tmp_path / "netsim-out").iterdir()
    summary = json.loads((out / "summary.json").read_text())
    for key in ("end_to_end_time_ns", "compute_time_ns", "exposed_comm_time_ns", "wall_time_s", "events",
                "backend", "partial", "network", "system", "workload"):
        assert key in summary
    assert summary["backend"] == "analytical" and summary["partial"] is False
    e2e = pd.read_csv(out / "end_to_end.csv")
    assert list(e2e.columns) == ["layer", "fwd_compute_ns", "ig_compute_ns", "wg_compute_ns",
                                 "fwd_exposed_comm_ns", "ig_exposed_comm_ns", "wg_exposed_comm_ns",
                                 "fwd_total_comm_ns", "ig_total_comm_ns", "wg_total_comm_ns",
                                 "fwd_exposed_update_ns", "ig_exposed_update_ns", "wg_exposed_update_ns"]
    assert len(e2e) == 54
    assert e2e["wg_exposed_comm_ns"].sum() + e2e["wg_exposed_update_ns"].sum() == pytest.approx(
        summary["exposed_comm_time_ns"])
    assert e2e["wg_exposed_update_ns"].sum() == pytest.approx(summary["exposed_update_time_ns"])
    links = pd.read_csv(out / "links.csv")
    assert {"link_id", "src", "dst", "kind", "dim", "bytes", "busy_time_ns", "utilization"} <= set(links.columns)
    assert "end-to-end time" in result.stdout


def test_json_output_and_overrides(tmp_path):
    result = netsim("run", "--network", "ring-8", "--passes", "2", "--set", "topology.bandwidth=100GB/s",
                    "--set", "preferred-dataset-splits=1", "--json", "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["passes"] == 2
    assert summary["network"]["config"]["topology"]["bandwidth"] == "100GB/s"
    assert summary["system"]["preferred-dataset-splits"] == 1
    assert (tmp_path / "o" / "summary.json").is_file()


def test_collective_reports_bandwidths(tmp_path):
    result = netsim("collective", "all-reduce", "--size", "64MiB", "--network", "ring-16", "--json",
                    "--set", "endpoint-delay=0", "--set", "preferred-dataset-splits=1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    s = json.loads(result.stdout)
    n, size = 16, 64 * 2**20
    expected = 2 * (n - 1) * (500 + size / (n * 50))
    assert s["collective_time_ns"] == pytest.approx(expected)
    assert s["algbw_GBps"] == pytest.approx(size / expected)
    assert s["busbw_GBps"] == pytest.approx(size / expected * 2 * (n - 1) / n)


def test_topo_and_report(tmp_path):
    topo = netsim("topo", "torus-4x4", "--json", cwd=tmp_path)
    assert json.loads(topo.stdout)["bisection_bandwidth_GBps"] == 400
    netsim("run", "--network", "ring-8", "--out", str(tmp_path / "r"), "--quiet", cwd=tmp_path)
    report = netsim("report", str(tmp_path / "r"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "link utilization per dimension" in report.stdout
    missing = netsim("report", str(tmp_path / "nothing"), cwd=tmp_path)
    assert missing.returncode == 2 and "no summary.json" in missing.stderr


def test_synth_reports_loads_and_latency(tmp_path):
    result = netsim("synth", "--network", "torus-8x8-noc", "--pattern", "uniform", "--rate", "0.1", "--cycles", "500",
                    "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    s = json.loads(result.stdout)
    for key in ("offered_load", "accepted_load", "avg_packet_latency_cycles", "avg_network_latency_cycles",
                "avg_hops", "wall_time_s", "backend", "partial"):
        assert key in s
    assert s["backend"] == "garnet"
    assert 0.05 < s["accepted_load"] < 0.15  # below saturation the network accepts what is offered
    missing = netsim("synth", "--pattern", "uniform", cwd=tmp_path)
    assert missing.returncode == 2 and "--rate" in missing.stderr


def exact_rows(path) -> list[dict]:
    """A CSV's rows as text (floats as written: pandas 2's default parser can miss their last bit)."""
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


EVERY_SUMMARY = ("name", "backend", "partial", "seed", "wall_time_s", "events", "simulated_time_ns",
                 "max_link_utilization", "max_link_utilization_link", "peak_interval_link_utilization", "warnings")


@pytest.mark.parametrize("kind, argv", [
    ("synth", ["synth", "--network", "torus-8x8-noc", "--pattern", "uniform", "--rate", "0.2", "--cycles", "400"]),
    ("sweep", ["synth", "--network", "torus-8x8-noc", "--set", "topology.dims=[4,4]", "--pattern", "uniform",
               "--sweep", "--cycles", "300"]),
    ("collective", ["collective", "all-reduce", "--size", "16KiB", "--network", "ring-8"]),
    ("sizes", ["collective", "all-reduce", "--size", "16KiB:64KiB", "--network", "ring-8", "--algorithm", "direct"]),
])
def test_every_command_summary_has_the_common_keys(tmp_path, kind, argv):
    """README's output contract: the keys every command's summary.json has (synth and size ranges lacked
    the time and link ones), with the busiest link the links table's (or the sizes table's)."""
    result = netsim(*argv, "--quiet", "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert [key for key in EVERY_SUMMARY if key not in s] == []
    assert s["simulated_time_ns"] > 0 and s["max_link_utilization"] > 0
    if kind in ("synth", "collective"):
        links = exact_rows(tmp_path / "o" / "links.csv")
        busiest = max(links, key=lambda row: (float(row["utilization"]), -int(row["link_id"])))
        assert s["max_link_utilization"] == float(busiest["utilization"])
        assert s["max_link_utilization_link"] == int(busiest["link_id"])
        assert s["peak_interval_link_utilization"] >= s["max_link_utilization"]
    if kind == "synth":
        assert s["simulated_time_ns"] == s["cycles"] * s["cycle_ns"]
    if kind == "sizes":  # the busiest link over the sizes, the simulated times summed
        sizes = exact_rows(tmp_path / "o" / "sizes.csv")
        assert s["max_link_utilization"] == max(float(row["max_link_utilization"]) for row in sizes)
        assert s["simulated_time_ns"] >= sum(float(row["collective_time_ns"]) for row in sizes)
    if kind == "sweep":  # the highest load's links
        assert s["max_link_utilization"] <= 1 and s["peak_interval_link_utilization"] == 0.0


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path):
    """`netsim synth ... --json | head -8`: the reader has gone when netsim writes."""
    process = subprocess.Popen([*netsim_command(), "synth", "--network", "torus-8x8-noc", "--pattern", "uniform",
                                "--rate", "0.1", "--cycles", "300", "--json", "--out", str(tmp_path / "o")],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    process.stdout.close()  # as a reader that has taken what it wanted
    stderr = process.stderr.read()
    process.wait(timeout=60)
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    assert process.returncode == 141 and (tmp_path / "o" / "summary.json").is_file()


def test_version_and_list_name_every_bundled_config(tmp_path):
    from importlib.metadata import version
    from pathlib import Path

    shown = netsim("--version", cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout.startswith(f"netsim {version('netsim')} (packet core: ")
    listed = json.loads(netsim("list", "--json", cwd=tmp_path).stdout)
    assert "torus-8x8-noc" in listed["networks"] and "default" in listed["systems"]
    assert "Resnet50_DataParallel" in listed["workloads"]
    assert all(text for entries in listed.values() for text in entries.values())
    configs_page = (Path(__file__).resolve().parents[2] / "docs" / "configs.md").read_text()
    for entries in listed.values():
        for name in entries:
            assert f"`{name}`" in configs_page, f"docs/configs.md's bundled list misses {name}"


def test_a_size_range_runs_every_size_into_one_table_and_csv(tmp_path):
    shown = netsim("collective", "all-reduce", "--size", "1KiB:1MiB:4", "--network", "ring-8", "--out",
                   str(tmp_path / "r"), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    sizes = pd.read_csv(tmp_path / "r" / "sizes.csv")
    assert list(sizes["size_bytes"]) == [1024, 4096, 16384, 65536, 262144, 1048576]
    assert (sizes["busbw_GBps"].diff().dropna() > 0).all()  # bus bandwidth grows with size on an idle ring
    for text in ("1KiB", "1MiB", "algbw (GB/s)", "busbw (GB/s)"):
        assert text in shown.stdout
    single = json.loads(netsim("collective", "all-reduce", "--size", "16KiB", "--network", "ring-8", "--json",
                               "--out", str(tmp_path / "s"), cwd=tmp_path).stdout)
    assert single["busbw_GBps"] == pytest.approx(sizes.loc[2, "busbw_GBps"])


def test_a_sweep_prints_its_table_and_report_makes_a_csv_and_a_plot(tmp_path):
    pytest.importorskip("matplotlib")
    study = tmp_path / "bw.toml"
    study.write_text('[base]\ncommand = "collective"\nkind = "all-reduce"\nnetwork = "ring-8"\n[grid]\n'
                     'size = ["1KiB", "64KiB"]\nalgorithm = ["ring", "direct"]\n')
    swept = netsim("sweep", str(study), "--jobs", "1", cwd=tmp_path)
    assert swept.returncode == 0, swept.stderr
    assert "4 points: collective_time_ns" in swept.stdout and "64KiB" in swept.stdout
    shown = netsim("report", str(tmp_path), "--plot", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    table = pd.read_csv(tmp_path / "bw.results.csv")
    assert list(table["algorithm"]) == ["ring", "direct", "ring", "direct"] and (table["status"] == "ok").all()
    assert (tmp_path / "bw.results.png").read_bytes()[:4] == b"\x89PNG"
    busbw = netsim("report", str(tmp_path / "bw.results.jsonl"), "--metric", "busbw_GBps", cwd=tmp_path)
    assert busbw.returncode == 0 and "busbw_GBps" in busbw.stdout
    wrong = netsim("report", str(tmp_path), "--metric", "speed", cwd=tmp_path)
    assert wrong.returncode == 2 and "--metric speed: not in these results" in wrong.stderr


def readme_row(readme: str, label: str) -> list[str]:
    """The backquoted names in docs/outputs.md's output-table row for `label` (its first cell), in order."""
    row = next(line for line in readme.splitlines() if line.startswith(f"| {label} |"))
    return re.findall(r"`([^`]+)`", row.split("|", 2)[2])


def test_readme_documents_every_column_in_file_order(tmp_path):
    """Every CSV a run, collective, synth, size range and packet-backend run writes: each column in
    docs/outputs.md's row for that file (README's reference, moved there), in the file's order."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "docs" / "outputs.md").read_text()
    runs = {"r": ["run", "--network", "ring-8", "--workload", "microAllReduce", "--backend", "garnet"],
            "c": ["collective", "broadcast", "--size", "16KiB", "--network", "ring-8", "--backend", "garnet"],
            "s": ["synth", "--network", "torus-8x8-noc", "--pattern", "uniform", "--rate", "0.1", "--cycles", "300"],
            "w": ["synth", "--network", "torus-8x8-noc", "--pattern", "uniform", "--sweep", "--cycles", "300"],
            "z": ["collective", "all-reduce", "--size", "1KiB:4KiB", "--network", "ring-8"],
            "a": ["run", "--network", "ring-8", "--workload", "microAllReduce"]}
    for name, args in runs.items():
        done = netsim(*args, "--out", str(tmp_path / name), "--quiet", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    for csv in sorted(tmp_path.glob("*/*.csv")):
        label = f"`{csv.name}`"
        if csv.name == "detailed.csv":
            label += " (`collective`)" if csv.parent.name == "c" else " (`run`)"
        documented = readme_row(readme, label)
        columns = list(pd.read_csv(csv, nrows=0).columns)
        missing = [column for column in columns if column not in documented]
        assert not missing, f"{csv.parent.name}/{csv.name}: docs/outputs.md does not document {missing}"
        assert [c for c in documented if c in columns] == columns, f"{csv.name}: docs/outputs.md's order is not the file's"


@pytest.mark.parametrize("command", [["run", "--workload", "microAllToAll"],
                                     ["collective", "all-to-all", "--size", "1MiB"]])
def test_congestion_aware_backend_from_the_command_line(tmp_path, command):
    result = netsim(*command, "--network", "torus-2x4x4", "--backend", "congestion-aware", "--json",
                    "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["backend"] == "congestion-aware"
    assert pd.read_csv(tmp_path / "o" / "links.csv")["utilization"].max() <= 1 + 1e-9
