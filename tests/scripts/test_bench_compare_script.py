"""scripts/bench_compare.py: a checkout compared with itself runs each side in its own process and
reports the same result (so a change that kept results would say so); bad options are one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bench_compare.py"


def compare(*options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(ROOT), *options], capture_output=True, text=True)


def test_a_checkout_compared_with_itself_has_the_same_result():
    done = compare("--scenarios", "ring-4x4", "--repeats", "1")
    assert done.returncode == 0, done.stderr
    line = done.stdout.splitlines()[-1]
    assert line.startswith("ring-4x4") and line.endswith("same result"), done.stdout


def test_bad_options_are_one_line_errors(tmp_path):
    for options, message in ((("--scenarios", "ring-4x5"), "unknown scenario 'ring-4x5'"),
                             (("--repeats", "0"), "--repeats 0: expected 1 or more")):
        done = compare(*options)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2 and "not a checkout of netsim" in done.stderr
