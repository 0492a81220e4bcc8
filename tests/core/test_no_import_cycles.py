"""No import circle among lcm's modules, nor among the children of any package.

Every import counts: module level, under `if TYPE_CHECKING:` and inside a function. The
graph is read from the source with `ast`, so the check needs neither import-linter nor
an import of the code (`.importlinter`'s `acyclic_siblings` contract says the same in
`tox -e arch`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("lcm_core", "lcm_adapter", "lcm_store_sqlite", "lcm_store_duckdb", "lcm_store_postgres")

Graph = dict[str, set[str]]


def module_files(root: Path, packages: Iterable[str]) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, whether it is a package's `__init__`)."""
    found: dict[str, tuple[Path, bool]] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def import_graph(modules: Mapping[str, tuple[Path, bool]]) -> Graph:
    """Each module -> the modules of ours it imports, wherever the import statement is."""

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: Graph = {}
    for name, (path, is_package) in modules.items():
        here = name if is_package else name.rpartition(".")[0]
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                targets.update(known(f"{base}.{alias.name}") for alias in node.names)
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part: list[str] = []
            while not part or part[-1] != node:
                part.append(stack.pop())
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _child(package: str, name: str) -> str | None:
    """The child of `package` that holds module `name` (None: not inside it)."""
    prefix = package + "."
    if not name.startswith(prefix):
        return None
    return prefix + name[len(prefix) :].split(".")[0]


def sibling_circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Circles among the children of each package: `a.b.x -> a.c.y` is an edge `a.b -> a.c`."""
    found: list[list[str]] = []
    for package in sorted({name.rpartition(".")[0] for name in graph} - {""}):
        folded: Graph = {}
        for importer, imported in graph.items():
            source = _child(package, importer)
            if source is None:
                continue
            folded.setdefault(source, set())
            for target in imported:
                upstream = _child(package, target)
                if upstream is not None and upstream != source:
                    folded[source].add(upstream)
        found.extend(circles(folded))
    return found


def all_circles(root: Path, packages: Iterable[str]) -> list[list[str]]:
    """Every module circle and every circle among a package's children, once each."""
    graph = import_graph(module_files(root, packages))
    found = circles(graph) + sibling_circles(graph)
    return sorted({tuple(c): c for c in found}.values())


def test_no_module_or_package_imports_itself_through_another() -> None:
    """lcm's import graph, late and type-checking imports included, has no circle."""
    assert all_circles(ROOT, PACKAGES) == []


def test_the_check_sees_late_and_type_checking_imports(tmp_path: Path) -> None:
    """A circle closed only by a late import or a TYPE_CHECKING import is still found."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import B\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\nB = 1\n"
    )
    (pkg / "c.py").write_text("def f():\n    from .sub.d import D\n    return D\n")
    (pkg / "sub" / "d.py").write_text("from pkg.c import f\nD = 2\n")
    (pkg / "sub" / "e.py").write_text("import pkg.a\n")
    assert all_circles(tmp_path, ["pkg"]) == [
        ["pkg.a", "pkg.b"],
        ["pkg.c", "pkg.sub"],
        ["pkg.c", "pkg.sub.d"],
    ]


def test_an_import_one_way_is_no_circle(tmp_path: Path) -> None:
    """Packages importing each other's modules in one direction only are acyclic."""
    pkg = tmp_path / "pkg"
    (pkg / "low").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "low" / "__init__.py"):
        init.write_text("")
    (pkg / "low" / "words.py").write_text("WORDS = ('预算', 'budget')\n")
    (pkg / "rank.py").write_text("from pkg.low.words import WORDS\n")
    (pkg / "face.py").write_text("from . import rank\nfrom .low import words\n")
    assert all_circles(tmp_path, ["pkg"]) == []
