"""The import rules of docs/architecture.md, checked over the installed
package: no import cycle among qnndoctor's own modules, counting the imports
inside functions (lazy, for start-up speed) and under ``TYPE_CHECKING``; the
Python API imports no command-line module; and no function over McCabe
complexity 15 (ruff's C901, as the test extra installs it)."""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

# The installed top-level packages (pyproject's package-dir mapping puts the
# probes and the matrix folder under qnndoctor).
PACKAGES = ("qnndoctor", "qnndoctor.probes", "qnndoctor.matrix")


def installed_roots() -> dict[str, Path]:
    """Each package's folder, as the import system finds it."""
    roots = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations, name
        roots[name] = Path(next(iter(spec.submodule_search_locations)))
    return roots


def modules(roots: dict[str, Path]) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package), for every module of the packages
    (the matrix's refresh tool included); folders without ``__init__.py``
    are not packages and are left out."""
    found: dict[str, tuple[Path, bool]] = {}
    others = set(roots.values())
    for base, root in roots.items():
        folders = [root]
        while folders:
            folder = folders.pop()
            relative = folder.relative_to(root).parts
            package = ".".join((base, *relative))
            for path in sorted(folder.iterdir()):
                if path.is_dir() and (path / "__init__.py").is_file() and path not in others:
                    folders.append(path)
                elif path.suffix == ".py" and path.name == "__init__.py":
                    found[package] = (path, True)
                elif path.suffix == ".py":
                    found[f"{package}.{path.stem}"] = (path, False)
    return found


def _absolute(current: str, is_package: bool, level: int, module: str | None) -> str:
    """The module a ``from`` import names, relative ones resolved."""
    if not level:
        return module or ""
    parts = current.split(".") if is_package else current.split(".")[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, module] if module else parts)


def import_graph(found: dict[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in its text.
    ``from x import name`` counts as importing ``x.name`` when that is a
    module, else ``x``; a module's own ancestor packages are not edges
    (Python imports them first in any case)."""
    graph: dict[str, set[str]] = {name: set() for name in found}
    for name, (path, is_package) in found.items():
        tree = ast.parse(path.read_text("utf-8"), str(path))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(name, is_package, node.level, node.module)
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for target in targets:
                while target not in found and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in found and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan,
    iterative): each is a set of modules that import each other round."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
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


@functools.cache
def installed_graph() -> dict[str, set[str]]:
    found = modules(installed_roots())
    assert "qnndoctor.probes.base" in found and "qnndoctor.render.json_out" in found
    return import_graph(found)


def test_the_checker_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    """The check itself: a cycle through a lazy relative import is one."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def f():\n    from .sub import high\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "high.py").write_text("from .. import low\n")
    (package / "alone.py").write_text("from . import low\nfrom .sub.high import name\n")
    graph = import_graph(modules({"pkg": package}))
    assert graph["pkg.alone"] == {"pkg.low", "pkg.sub.high"}
    assert cycles(graph) == [["pkg.low", "pkg.sub.high"]]


def test_no_import_cycle_in_the_installed_package() -> None:
    assert cycles(installed_graph()) == []


def test_the_api_imports_no_command_line_module() -> None:
    """The API calls the pipeline and the engines, never a command's front
    door (everything in ``qnndoctor/cli/``): data flows one way."""
    graph = installed_graph()
    front_doors = {name for name in graph if name.startswith("qnndoctor.cli.")}
    assert {"qnndoctor.cli.main", "qnndoctor.cli.explain", "qnndoctor.cli.fix"} <= front_doors
    assert graph["qnndoctor.api"] & front_doors == set()


def test_only_the_command_line_imports_the_command_line() -> None:
    """Below the front doors nothing reaches back up into ``cli/``: only the
    console entry (and ``python -m qnndoctor``) starts it."""
    graph = installed_graph()
    allowed = {"qnndoctor.console", "qnndoctor.__main__"}
    reaching_up = {
        (name, imported)
        for name, imports in graph.items()
        if not name.startswith("qnndoctor.cli.") and name not in allowed
        for imported in imports
        if imported.startswith("qnndoctor.cli.")
    }
    assert reaching_up == set()


def test_at_most_twelve_loose_modules_at_the_top() -> None:
    """Concern folders, each named for what it holds: a newcomer reads the top
    of the package at a glance (issue 26: at most ~12 loose modules)."""
    package = Path(importlib.util.find_spec("qnndoctor").origin or "").parent  # type: ignore[union-attr]
    loose = sorted(p.name for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert 0 < len(loose) <= 12, loose


def test_concern_folders_import_nothing_at_package_level() -> None:
    """The concern folders' ``__init__.py`` hold a docstring only: importing
    one module of a folder never imports the rest of it."""
    package = Path(importlib.util.find_spec("qnndoctor").origin or "").parent  # type: ignore[union-attr]
    for folder in ("cli", "children", "target", "facts", "rules", "resolver", "report"):
        tree = ast.parse((package / folder / "__init__.py").read_text("utf-8"))
        assert [type(node).__name__ for node in tree.body] == ["Expr"], folder


def test_tests_mirror_the_package() -> None:
    """The test of a module is found in one try: each folder of tests/ (but
    its fixtures) is named for a folder of the code, and no test file is
    left loose at the top but the whole-program ones."""
    tests = Path(__file__).resolve().parent
    repo = tests.parent
    code = {"probes": repo / "probes", "matrix_refresh": repo / "matrix" / "refresh"}
    fixtures = {"helpers", "data", "diagnosis_corpus", "lint_cases", "lint_correct", "__pycache__"}
    for folder in sorted(p for p in tests.iterdir() if p.is_dir() and p.name not in fixtures):
        mirrored = code.get(folder.name, repo / "qnndoctor" / folder.name)
        assert mirrored.is_dir(), f"tests/{folder.name}/ mirrors no folder of the code"
        assert list(folder.glob("test_*.py")), folder
    loose = sorted(p.name for p in tests.glob("test_*.py"))
    whole_program = [
        "test_api.py",  # the Python API
        "test_architecture.py",  # the layout itself
        "test_check_envs.py",  # `check` end to end on real environments
        "test_decoding.py",  # decoding.py (top level)
        "test_headstart.py",  # headstart.py (top level)
        "test_prescriptions.py",  # every printed command, run as printed
        "test_safejson.py",  # safejson.py (top level)
    ]
    assert loose == whole_program

MAX_COMPLEXITY = 15
# Functions allowed over the limit, as (file name without .py, function name): none
# today. test_the_complexity_allow_list_is_current fails on an entry that is no
# longer over the limit.
ALLOWED_COMPLEX: set[tuple[str, str]] = set()
_TOO_COMPLEX = re.compile(r"^`(?P<name>.+)` is too complex \((?P<value>\d+) > \d+\)$")


def too_complex(paths: list[Path]) -> dict[tuple[str, str], list[str]]:
    """(file stem, function) -> "path:line: complexity N" for every function
    over ``MAX_COMPLEXITY`` under ``paths``, by ruff's McCabe count (nested
    functions count in their enclosing one, as ruff counts them)."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select", "C901",
         "--config", f"lint.mccabe.max-complexity={MAX_COMPLEXITY}",
         "--output-format", "json", *map(str, paths)],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    found: dict[tuple[str, str], list[str]] = {}
    for item in json.loads(done.stdout):
        match = _TOO_COMPLEX.match(item["message"])
        assert item["code"] == "C901" and match, item
        path = Path(item["filename"])
        key = (path.stem, match["name"])
        where = f"{path}:{item['location']['row']}: complexity {match['value']}"
        found.setdefault(key, []).append(where)
    return found


@functools.cache
def installed_too_complex() -> dict[tuple[str, str], list[str]]:
    return too_complex(sorted(installed_roots().values()))


def test_the_complexity_checker_counts_branches(tmp_path: Path) -> None:
    """The check itself: 16 ifs in one function (17) is over; 14 (15) is not."""
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(16))
    (tmp_path / "deep.py").write_text(f"def deep(x):\n{branches}    return -1\n")
    fine = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(14))
    (tmp_path / "fine.py").write_text(f"def fine(x):\n{fine}    return -1\n")
    found = too_complex([tmp_path])
    assert list(found) == [("deep", "deep")]
    assert found["deep", "deep"][0].endswith("deep.py:1: complexity 17")


def test_no_function_over_complexity_15() -> None:
    over = {k: v for k, v in installed_too_complex().items() if k not in ALLOWED_COMPLEX}
    assert over == {}, "split these functions (complexity <= 15):\n" + "\n".join(
        w for where in over.values() for w in where
    )


def test_the_complexity_allow_list_is_current() -> None:
    stale = ALLOWED_COMPLEX - set(installed_too_complex())
    assert stale == set(), f"no longer over {MAX_COMPLEXITY}: remove from ALLOWED_COMPLEX: {stale}"


def test_the_slow_modules_started_first_exist() -> None:
    """conftest.SLOW_MODULES_FIRST names files: a moved test file would
    silently lose its early start."""
    from conftest import SLOW_MODULES_FIRST

    repo = Path(__file__).resolve().parent.parent
    assert [m for m in SLOW_MODULES_FIRST if not (repo / m).is_file()] == []


def test_test_file_names_are_unique() -> None:
    """pytest imports test modules by their file name (rootdir mode, no
    packages): two test_x.py in different folders stop the whole collection."""
    tests = Path(__file__).resolve().parent
    names: dict[str, list[str]] = {}
    for path in sorted(tests.rglob("test_*.py")):
        names.setdefault(path.name, []).append(str(path.relative_to(tests)))
    assert {n: p for n, p in names.items() if len(p) > 1} == {}
