"""scripts/fingerprint.py: each group's scenarios run (a broken default once failed every
collective scenario of the full fingerprint while `--only packet` worked)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fingerprint.py"
spec = importlib.util.spec_from_file_location("fingerprint", SCRIPT)
fingerprint = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fingerprint)


def test_the_first_scenario_of_every_group_runs():
    for group in fingerprint.GROUPS:
        name, thunk = next(iter(fingerprint.scenarios(group)))
        value = thunk()  # an exception here would be recorded as the scenario's `error: ...`
        times = value if isinstance(value, tuple) else (value,)
        assert times and all(time > 0 for time in times if isinstance(time, float)), (group, name, value)
