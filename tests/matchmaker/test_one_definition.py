"""Small shared definitions of the matchmaker exist once, not as copies per module, and
each class name of a product means one thing (issue 41: a core value and its wire Struct
under one name forced ``import ... as`` aliases; docs/architecture.md, One name per idea)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import matchmaker
import tasktool

SOURCE = Path(matchmaker.__file__).parent


def _holding(text: str) -> list[str]:
    return sorted(
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if text in path.read_text(encoding="utf-8")
    )


def test_one_internal_error_factory() -> None:
    assert _holding('"internal error"') == ["errors.py"]


def test_one_asgi_send_alias() -> None:
    assert _holding("Callable[[MutableMapping[str, Any]], Awaitable[None]]") == ["asgi.py"]


def classes_defined_twice(package: Path) -> dict[str, list[str]]:
    """Each class name defined in more than one module of ``package``, with those modules."""
    where: defaultdict[str, set[str]] = defaultdict(set)
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where[node.name].add(str(path.relative_to(package)))
    return {name: sorted(modules) for name, modules in where.items() if len(modules) > 1}


@pytest.mark.parametrize("package", [SOURCE, Path(tasktool.__file__).parent], ids=str)
def test_no_class_name_is_defined_twice_in_a_product(package: Path) -> None:
    assert classes_defined_twice(package) == {}
