"""Every tasktool module says what it offers the others in ``__all__`` (the one rule for
the whole package, as ``tasktool/__init__`` does for the library), and the modules keep
to it: a name one module imports from another is in that module's ``__all__``.

A helper a module keeps for itself is left out of ``__all__``; a new import of it
elsewhere fails here, so what a module offers is decided where it is written."""

from __future__ import annotations

import ast
from pathlib import Path

import tasktool

SOURCE = Path(tasktool.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _declared(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            names = ast.literal_eval(node.value)
            assert isinstance(names, list)
            return names
    return None


def _modules() -> dict[str, tuple[ast.Module, list[str] | None]]:
    found = {}
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found[_module_name(path)] = (tree, _declared(tree))
    return found


MODULES = _modules()


def test_every_module_declares_all() -> None:
    assert [name for name, (_, names) in MODULES.items() if names is None] == []


def test_all_lists_public_names_once() -> None:
    for name, (_, names) in MODULES.items():
        assert names is not None
        assert len(names) == len(set(names)), name
        assert all(not item.startswith("_") or item == "__version__" for item in names), name


def test_modules_import_only_what_others_offer() -> None:
    reaching: dict[str, list[str]] = {}
    for name, (tree, _) in MODULES.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.module not in MODULES:
                continue
            offered = MODULES[node.module][1] or []
            for alias in node.names:
                if alias.name not in offered and f"{node.module}.{alias.name}" not in MODULES:
                    reaching.setdefault(f"{node.module}.{alias.name}", []).append(name)
    assert reaching == {}
