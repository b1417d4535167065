"""No product holds module-level state that functions change (issue 41, item 3): what a
run reads belongs to an object its caller owns (a body store to the load that decoded
the tasks, as a response's body to the response), and a cache is ``functools.lru_cache``
or an owned object. Two loads never see each other's rows, and a test never inherits
what an earlier one left in a module.

Checked on the source's syntax: no ``global`` statement, and no module-level container
(a list, dict or set display or comprehension, or a call of a mutable container's type)
that a function or method changes (a mutating method called on it, an item or slice
assigned or deleted)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ROOT / "packages"

#: Calls that make a mutable container.
MAKERS = frozenset(
    {
        "list",
        "dict",
        "set",
        "bytearray",
        "array",
        "deque",
        "defaultdict",
        "OrderedDict",
        "Counter",
        "WeakKeyDictionary",
        "WeakValueDictionary",
        "WeakSet",
    }
)
#: Methods that change a container in place.
MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "add",
        "update",
        "setdefault",
        "pop",
        "popitem",
        "popleft",
        "appendleft",
        "remove",
        "discard",
        "clear",
        "move_to_end",
        "sort",
        "reverse",
        "__setitem__",
        "__delitem__",
    }
)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _maker(node: ast.expr | None) -> bool:
    """Whether ``node`` makes a mutable container."""
    if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in MAKERS
    return False


def module_containers(tree: ast.Module) -> set[str]:
    """The names a module binds, at its top level, to a mutable container."""
    found: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and _maker(statement.value):
            found.update(t.id for t in statement.targets if isinstance(t, ast.Name))
        elif (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and _maker(statement.value)
        ):
            found.add(statement.target.id)
    return found


def _changed(node: ast.AST, names: set[str]) -> str | None:
    """The module container ``node`` changes, if any."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = node.func.value
        if isinstance(owner, ast.Name) and owner.id in names and node.func.attr in MUTATORS:
            return owner.id
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = node.targets
    for target in targets:
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and target.value.id in names
        ):
            return target.value.id
    return None


def offences(source: str) -> Iterator[str]:
    """Each ``global`` statement, and each change a function makes to a module-level
    container, in ``source`` (line: what)."""
    tree = ast.parse(source)
    names = module_containers(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            yield f"{node.lineno}: global {', '.join(node.names)}"
        if not isinstance(node, FUNCTIONS):
            continue
        # A function's own local of the same name shadows the module's.
        local = {
            target.id
            for inner in ast.walk(node)
            if isinstance(inner, (ast.Assign, ast.AnnAssign))
            for target in (inner.targets if isinstance(inner, ast.Assign) else [inner.target])
            if isinstance(target, ast.Name)
        }
        arguments = {arg.arg for arg in ast.walk(node.args) if isinstance(arg, ast.arg)}
        watched = names - local - arguments
        for inner in ast.walk(node):
            name = _changed(inner, watched)
            if name is not None:
                yield f"{getattr(inner, 'lineno', node.lineno)}: changes module-level {name}"


def test_the_scan_finds_what_it_looks_for() -> None:
    """The checker is itself checked: each kind of change is found, a local is not."""
    source = """
_kept = [None]
_seen: dict[str, int] = {}
_order = OrderedDict()
counter = 0

def install(reader):
    _kept[0] = reader

def note(key):
    _seen.setdefault(key, 0)
    del _order[key]

def bump():
    global counter
    counter += 1

def fine(_seen):
    _seen.clear()
    mine = []
    mine.append(1)
"""
    assert sorted(offences(source)) == [
        "11: changes module-level _seen",
        "12: changes module-level _order",
        "15: global counter",
        "8: changes module-level _kept",
    ]


def test_no_product_holds_module_state_that_functions_change() -> None:
    """tasktool, matchmaker and common alike (matchmaker's relay prefixes were such a dict)."""
    found = {
        str(path.relative_to(ROOT)): problems
        for path in sorted(PACKAGES.glob("*/src/**/*.py"))
        if (problems := list(offences(path.read_text(encoding="utf-8"))))
    }
    assert found == {}
