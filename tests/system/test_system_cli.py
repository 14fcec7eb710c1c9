"""`netsim collective` for every collective kind, with `--verify` checking real payloads."""

import json

import pytest

from netsim.app.cli import main


@pytest.mark.parametrize("kind, algorithm", [("all-reduce", "halving-doubling"), ("all-to-all", "direct"),
                                             ("reduce-scatter", "ring"), ("all-gather", "recursive-doubling"),
                                             ("broadcast", None), ("scatter", None), ("barrier", None)])
def test_collective_verify(tmp_path, capsys, kind, algorithm):
    argv = ["collective", kind, "--network", "torus-4x4", "--verify", "--json", "--out", str(tmp_path)]
    argv += [] if kind == "barrier" else ["--size", "5000B"]
    argv += ["--algorithm", algorithm] if algorithm else []
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["verified"] is True and summary["collective_time_ns"] > 0
    assert (tmp_path / "detailed.csv").is_file()


def test_verify_refuses_sizes_it_cannot_hold(tmp_path, capsys):
    assert main(["collective", "all-reduce", "--size", "64MiB", "--verify", "--quiet", "--out", str(tmp_path)]) == 2
    assert "--verify" in capsys.readouterr().err


def test_algorithm_on_a_fixed_algorithm_collective_is_an_error(tmp_path, capsys):
    assert main(["collective", "gather", "--size", "1KiB", "--algorithm", "ring", "--out", str(tmp_path)]) == 2
    assert "fixed algorithm" in capsys.readouterr().err
