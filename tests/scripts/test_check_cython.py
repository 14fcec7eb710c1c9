"""scripts/check_cython.py names a .pxd declaration that its function does not use (Cython takes a
misspelt @cython.locals name silently), and finds none in the core as it stands (CI runs it too)."""

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import check_cython  # noqa: E402  (a script, not a module of the package)


def test_a_misspelt_local_in_a_pxd_is_named(tmp_path):
    garnet = tmp_path / "netsim" / "garnet"
    for pxd in (ROOT / "netsim" / "garnet").rglob("*.pxd"):  # (every declaration router.pxd cimports)
        copy = garnet / pxd.relative_to(ROOT / "netsim" / "garnet")
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(pxd, copy)
    for package in (tmp_path / "netsim", *{path.parent for path in garnet.rglob("*.pxd")}):
        (package / "__init__.py").write_text("")  # (Cython finds cimported modules through their packages)
    shutil.copy(ROOT / "netsim/garnet/router.py", garnet / "router.py")
    declared = (garnet / "router.pxd").read_text()
    assert "@cython.locals(occupied=list, i=Py_ssize_t)" in declared
    (garnet / "router.pxd").write_text(declared.replace("@cython.locals(occupied=list, i=Py_ssize_t)",
                                                        "@cython.locals(occupied=list, i=Py_ssize_t, ocupied=list)"))
    found = check_cython.unused_declarations(garnet / "router.py", root=tmp_path)
    assert len(found) == 1 and "router.pxd" in found[0] and "'ocupied'" in found[0], found


def test_the_core_lists_its_sources():
    sources = check_cython.core_sources()
    assert ROOT / "netsim/garnet/router.py" in sources and all(source.exists() for source in sources)
