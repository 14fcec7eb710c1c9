"""A name read from a file the user may not have written becomes a file name only as one safe path
component (issue 28, item 6): a workload named '../../escaped' or '/tmp/x' writes inside the folder
the user chose, by every writer."""

from pathlib import Path

import pytest

from netsim.app.cli import main
from workload import load_workload
from workload.generator import write

WORKLOAD = ('[workload]\nloop = "DATA"\nname = "{name}"\n[[layer]]\nname = "a"\nfwd-compute = 5\n'
            'wg-comm = "all-reduce"\nwg-comm-size = 1000\n')


def escaping_workload(folder, name):
    folder.mkdir(parents=True)
    path = folder / "w.toml"
    path.write_text(WORKLOAD.format(name=name))
    return path


def files_under(folder):
    return {path for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("name", ["../../escaped", "/tmp/netsim-escaped-{tmp}"])
def test_to_chakra_writes_its_traces_inside_out(tmp_path, monkeypatch, name):
    name = name.format(tmp=tmp_path.name)
    workload = escaping_workload(tmp_path / "a" / "b", name)
    monkeypatch.chdir(tmp_path / "a" / "b")
    before = files_under(tmp_path)
    assert main(["workload", "to-chakra", str(workload), "--network", "ring-8", "--out", "out", "--quiet"]) == 0
    written = files_under(tmp_path) - before
    assert len(written) == 8 and all(path.parent == tmp_path / "a" / "b" / "out" for path in written), written
    assert not list(Path("/tmp").glob(f"netsim-escaped-{tmp_path.name}*"))


def test_to_chakra_default_folder_and_run_inside_the_current_folder(tmp_path, monkeypatch):
    workload = escaping_workload(tmp_path / "a" / "b", "../../escaped")
    monkeypatch.chdir(tmp_path / "a" / "b")
    before = files_under(tmp_path)
    assert main(["workload", "to-chakra", str(workload), "--network", "ring-8", "--quiet"]) == 0
    assert main(["run", "--workload", str(workload), "--network", "ring-8", "--quiet"]) == 0
    written = files_under(tmp_path) - before
    assert written and all(tmp_path / "a" / "b" in path.parents for path in written), written


def test_workload_gen_writes_inside_out(tmp_path):
    workload = load_workload(escaping_workload(tmp_path / "a" / "b", "../../escaped"))
    legacy, toml = write(workload, tmp_path / "a" / "b" / "out")
    assert legacy.parent == toml.parent == tmp_path / "a" / "b" / "out"
