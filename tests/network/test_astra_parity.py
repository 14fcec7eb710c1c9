"""ASTRA-sim 2.x's own collective times, reproduced from its own input files.

Every row of the reference CSVs in tests/data/astra-sim-2x (README there: how they were made) is one
collective ASTRA-sim ran on a network YAML and system JSON; netsim reads the same files and must
give the slowest NPU's time within 1% (double binary tree: 2%).
"""

import csv
from pathlib import Path

import pytest

from netsim.network_config import load_network
from netsim.app.runner import run_collective
from system import load_system

DATA = Path(__file__).parents[1] / "data" / "astra-sim-2x"
BACKENDS = {"congestion_unaware": "analytical", "congestion_aware": "congestion-aware"}
TOLERANCE = {"doubleBinaryTree": 0.02}


def reference_rows():
    for path in sorted(DATA.glob("collectives-*.csv")):
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                if row["backend"] in BACKENDS:
                    name = (f"{path.stem[12:]}-{row['backend']}-{row['system_variant']}-{row['topology']}-"
                            f"{row['collective']}-{row['algorithm']}-{row['size_bytes_per_npu']}")
                    yield pytest.param(row, id=name)


@pytest.mark.parametrize("row", list(reference_rows()))
def test_astra_sim_collective_time(row):
    network = load_network(DATA / row["network_file"], backend=BACKENDS[row["backend"]])
    system = load_system(DATA / row["system_file"])
    kind = row["collective"].replace("_", "-")
    time = run_collective(network, system, kind, int(row["size_bytes_per_npu"])).summary["collective_time_ns"]
    reference = float(row["time_ns_slowest_npu"])
    assert time == pytest.approx(reference, rel=TOLERANCE.get(row["algorithm"], 0.01))
