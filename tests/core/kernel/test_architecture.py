"""The layout holds: no import cycle anywhere in desktop_app (runtime or type-checking
imports), and no module outside the library package speaks SQL."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parents[3] / "desktop_app"


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """Tarjan's algorithm over the modules of desktop_app: the groups that import each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in graph.find_modules_directly_imported_by(module):
            if not other.startswith("desktop_app"):
                continue
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                group.append(other)
                if other == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return groups


def test_no_import_cycles_in_desktop_app() -> None:
    graph = grimp.build_graph("desktop_app", exclude_type_checking_imports=False)
    assert len(graph.modules) > 50
    assert strongly_connected(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("desktop_app.a", "desktop_app.b", "desktop_app.c"):
        graph.add_module(name)
    graph.add_import(importer="desktop_app.a", imported="desktop_app.b")
    graph.add_import(importer="desktop_app.b", imported="desktop_app.a")
    graph.add_import(importer="desktop_app.c", imported="desktop_app.a")
    assert strongly_connected(graph) == [["desktop_app.a", "desktop_app.b"]]


SQL_CALLS = {"execute", "executemany", "sql", "query", "cursor", "fetchall", "fetchone"}


def test_only_the_library_package_speaks_sql() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("core/library/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(n == "duckdb" or n.startswith("duckdb.") for n in names) and relative != "services/knowledge_base.py":
                    offenders.append(f"{relative}:{node.lineno} imports duckdb")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in SQL_CALLS and isinstance(node.func.value, ast.Attribute | ast.Name):
                    owner = ast.unparse(node.func.value)
                    if "store" in owner or "con" in owner.split(".")[-1]:
                        offenders.append(f"{relative}:{node.lineno} {owner}.{node.func.attr}()")
    assert offenders == []
