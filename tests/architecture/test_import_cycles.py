"""No import cycle among the modules of the three packages.

Imports inside functions count (a deferred import hides a cycle from the interpreter,
not from the design); imports under ``if TYPE_CHECKING:`` do not.
"""

from __future__ import annotations

import grimp

PACKAGES = ("mtcommon", "matchmaker", "tasktool")


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_strongly_connected_finds_a_cycle() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles() -> None:
    imports = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True)
    graph = {m: imports.find_modules_directly_imported_by(m) for m in imports.modules}
    assert strongly_connected(graph) == []
