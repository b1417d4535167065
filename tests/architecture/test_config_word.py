"""Each product names its configuration with one word: ``config``.

matchmaker's ``model.config.Config`` is built in ``configure/``, tasktool's ``Config`` in
``config/``; the object is reached as ``.config`` (``plane.config``, ``repo.config``,
``loaded.config``), never as ``settings``. No identifier in the three packages is
``settings`` (a name, an attribute, a parameter, a field); words in strings (the JSON key
of ``config show``, help texts) are text for users, not names.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGES = Path(__file__).resolve().parents[2] / "packages"
WORD = "settings"


def identifier(node: ast.AST) -> str | None:
    """The name ``node`` gives or reads: a name, an attribute, a parameter, a keyword."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.arg | ast.keyword):
        return node.arg
    return None


def named_settings(source: str, name: str) -> list[str]:
    """``file:line`` of each identifier ``settings`` in ``source``."""
    lines = {
        getattr(node, "lineno", 0)
        for node in ast.walk(ast.parse(source))
        if identifier(node) == WORD
    }
    return [f"{name}:{line}" for line in sorted(lines)]


def test_each_kind_of_name_is_found() -> None:
    source = (
        "settings = 1\n"
        "x.settings\n"
        "def f(settings): ...\n"
        "g(settings=2)\n"
        "class C:\n    settings: int\n"
        "context_settings = {'settings': 1}\n"
    )
    assert named_settings(source, "m.py") == [f"m.py:{n}" for n in (1, 2, 3, 4, 6)]


@pytest.mark.parametrize("package", sorted(p.name for p in PACKAGES.iterdir() if p.is_dir()))
def test_no_identifier_names_the_configuration_settings(package: str) -> None:
    found = [
        hit
        for path in sorted((PACKAGES / package / "src").rglob("*.py"))
        for hit in named_settings(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGES)))
    ]
    assert found == []
