"""scripts/bench_compare.py: a checkout compared with itself runs each side in its own process and
reports the same result (so a change that kept results would say so), and refuses what it does not know."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "bench_compare.py"


def compare(*options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(ROOT), *options], capture_output=True, text=True)


def test_a_checkout_compared_with_itself_has_the_same_result():
    done = compare("--scenarios", "ring-4x4", "--repeats", "1")
    assert done.returncode == 0, done.stderr
    line = done.stdout.splitlines()[-1]
    assert line.startswith("ring-4x4") and line.endswith("same result"), done.stdout


def test_an_unknown_scenario_is_a_one_line_error():
    done = compare("--scenarios", "ring-4x5")
    assert done.returncode == 2 and "unknown scenario 'ring-4x5'" in done.stderr
