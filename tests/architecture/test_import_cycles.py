"""No import cycle among the modules of ``mtcommon``, ``matchmaker`` and ``tasktool``.

Imports inside functions count (a deferred import hides a cycle from the interpreter, not
from the design); imports under ``if TYPE_CHECKING:`` do not, they never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def source_modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module under ``packages/*/src``."""
    found: dict[str, Path] = {}
    for src in sorted(ROOT.glob("packages/*/src")):
        for path in src.rglob("*.py"):
            name = ".".join(path.relative_to(src).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for branch in node.orelse:
                yield from _runtime_imports(branch)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _runtime_imports(node)


def imported_modules(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of ``known`` that module ``name`` (file ``path``) imports at run time."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            anchor = parts[: len(parts) - node.level + 1]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        targets.add(base)
        targets.update(f"{base}.{alias.name}" for alias in node.names)
    return {target for target in targets if target in known and target != name}


def strongly_connected(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    work: list[tuple[str, Iterator[str]]] = []  # the depth-first path, empty between starts

    def enter(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        work.append((node, iter(sorted(graph[node]))))

    for start in graph:
        if start in index:
            continue
        enter(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    enter(target)
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def import_graph() -> dict[str, set[str]]:
    known = source_modules()
    return {name: imported_modules(name, path, known) for name, path in known.items()}


def test_the_checker_sees_the_packages() -> None:
    graph = import_graph()
    for package in ("mtcommon", "matchmaker", "tasktool"):
        assert package in graph
    assert "tasktool.model.task" in graph["tasktool"]  # tasktool/__init__ re-exports Task


def test_the_checker_finds_a_cycle() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_any_package() -> None:
    assert strongly_connected(import_graph()) == []
