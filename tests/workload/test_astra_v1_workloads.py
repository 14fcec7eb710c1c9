"""ASTRA-sim v1's end-to-end times on its legacy sample workloads, networks and systems.

Each row of tests/data/astra-sim-v1/*.csv (README there: how they were made) is one `AnalyticalAstra`
run of two passes; `netsim run` on the same files must finish within 1% of it. Every Torus3D row
runs here; of the other networks' rows, ResNet-50 and the Transformers on the 16- and 32-NPU
networks take seconds each and are left to `scripts/astra_parity.py --only v1`, which runs them all.
"""

import csv
import warnings
from pathlib import Path

import pytest

from netsim.errors import ConfigError, NetsimWarning
from netsim.network_config import load_network
from netsim.app.runner import run_training
from system import load_system
from workload import load_workload

DATA = Path(__file__).parents[1] / "data" / "astra-sim-v1"
SLOW = ("Resnet50_DataParallel", "Transformer_HybridParallel", "Transformer_HybridParallel_Fwd_In_Bckwd")


def reference_rows():
    rows = []
    for path in sorted(DATA.glob("workloads-*.csv")):
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                workload, network = Path(row["workload_file"]).stem, Path(row["network_file"]).stem
                if workload in SLOW and network not in ("sample_Torus3D", "sample_Switch"):
                    continue
                name = "-".join(Path(row[k]).stem for k in ("workload_file", "network_file", "system_file"))
                rows.append(pytest.param(row, id=name))
    return rows


@pytest.mark.parametrize("row", reference_rows())
def test_legacy_workload_end_to_end_time(row):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NetsimWarning)  # direct-collective-window, ignored as ASTRA-sim does
        system = load_system(DATA / row["system_file"])
    summary = run_training(load_network(DATA / row["network_file"]), system, load_workload(DATA / row["workload_file"]),
                           passes=int(row["passes"])).summary
    assert summary["end_to_end_time_ns"] == pytest.approx(float(row["end_to_end_ns"]), rel=0.01)
    assert summary["compute_time_ns"] == pytest.approx(float(row["compute_ns_npu0"]), rel=0.01)


def test_a_sample_system_with_a_netsim_only_key_warns_in_one_line_and_runs_as_astra_sim_would():
    with pytest.warns(NetsimWarning, match="direct-collective-window is not an ASTRA-sim key") as caught:
        config = load_system(DATA / "system" / "sample_a2a_sys.txt")
    assert len(caught) == 1 and "\n" not in str(caught[0].message)
    assert config.direct_collective_window == 0
    assert load_system(DATA / "system" / "sample_a2a_sys.txt",
                       [(["direct-collective-window"], 2)]).direct_collective_window == 2  # asked for explicitly


def test_a_ring_with_one_link_has_no_bandwidth_as_astra_sim_v1_counts_it():
    with pytest.raises(ConfigError, match=r"sample_Ring_FullyConnected_Ring.json.*links-count.*dimension 2"):
        load_network(DATA / "network" / "sample_Ring_FullyConnected_Ring.json")


def test_legacy_bandwidth_is_gib_per_second_times_the_links_scalar():
    """sample_Torus3D: 32 and 16 GB/s with 2 links per ring dimension -> 2 x the GiB/s figure."""
    topology = load_network(DATA / "network" / "sample_Torus3D.json").build_topology()
    assert [d.bandwidth for d in topology.dims] == pytest.approx([2 * b * 2**30 / 1e9 for b in (32, 16, 16)])
