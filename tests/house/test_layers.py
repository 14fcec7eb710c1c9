"""The house's rule, read from the source: imports point down only (app -> workload -> system ->
network -> base), lazy imports inside functions included, and no module imports itself back
through others, but for the forward declarations of the packet core's router, input unit and
output unit (imports under TYPE_CHECKING, gem5's style, which never run)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("netsim", "system", "workload")
# the shared base every layer may use: it imports nothing above it
BASE = {"netsim.errors", "netsim.units", "netsim.config", "netsim.files", "netsim.csv_text", "netsim.collector",
        "netsim.bundled", "netsim.budget", "netsim.booksim_rng"}
LAYERS = ("base", "network", "system", "workload", "app")  # from the bottom up


def module_files() -> dict[str, Path]:
    """Every module of the three packages by its dotted name (a package by its own name)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = module_files()


def layer(module: str) -> str:
    """The layer `module` belongs to; the package `netsim` itself is the shell's facade (netsim.run, ...)."""
    if module.startswith("netsim.app") or module in ("netsim", "netsim.__main__"):
        return "app"
    if module.split(".")[0] in ("system", "workload"):
        return module.split(".")[0]
    return "base" if module in BASE else "network"


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, (ast.Name, ast.Attribute)) and ast.unparse(node.test).endswith("TYPE_CHECKING")


def imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, under TYPE_CHECKING) for every import of our packages in `module`,
    at any depth (inside functions too); `from package import name` names the submodule where one exists."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    found = []

    def visit(node, guarded: bool) -> None:
        for child in ast.iter_child_nodes(node):
            child_guarded = guarded or (isinstance(child, ast.If) and _type_checking(child))
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, guarded) for alias in child.names
                             if alias.name.split(".")[0] in PACKAGES)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                if child.module.split(".")[0] in PACKAGES:
                    for alias in child.names:
                        sub = f"{child.module}.{alias.name}"
                        found.append((sub if sub in MODULES else child.module, child.lineno, guarded))
            if isinstance(child, ast.If) and _type_checking(child):
                for inner in child.body:
                    visit(ast.Module(body=[inner], type_ignores=[]), True)
                for inner in child.orelse:
                    visit(ast.Module(body=[inner], type_ignores=[]), guarded)
            else:
                visit(child, child_guarded)

    visit(tree, False)
    return found


def test_every_import_points_down_or_stays_in_its_layer():
    upward = []
    for module in MODULES:
        for target, line, _ in imports(module):
            if LAYERS.index(layer(target)) > LAYERS.index(layer(module)):
                upward.append(f"{MODULES[module].relative_to(ROOT)}:{line}: {layer(module)} {module} imports "
                              f"{layer(target)} {target}")
    assert not upward, "\n".join(upward)


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_back_but_through_type_checking_declarations():
    edges = {module: {target for target, _, guarded in imports(module) if not guarded and target in MODULES
                      and target != module} for module in MODULES}
    assert circles(edges) == []


def test_the_router_trio_is_the_one_circle_of_forward_declarations():
    edges = {module: {target for target, _, _ in imports(module) if target in MODULES and target != module}
             for module in MODULES}
    assert [set(c) for c in circles(edges)] == [{"netsim.garnet.input_unit", "netsim.garnet.output_unit",
                                                 "netsim.garnet.router"}]


def test_the_rule_is_checked_on_a_module_that_breaks_it(tmp_path, monkeypatch):
    """The walk finds a lazy upward import inside a function (what the rule is for), and a circle."""
    monkeypatch.setitem(MODULES, "netsim.topology.probe", tmp_path / "probe.py")
    (tmp_path / "probe.py").write_text("def f():\n    from netsim.app.runner import RunResult\n")
    assert imports("netsim.topology.probe") == [("netsim.app.runner", 2, False)]
    assert LAYERS.index(layer("netsim.app.runner")) > LAYERS.index(layer("netsim.topology.probe"))
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
