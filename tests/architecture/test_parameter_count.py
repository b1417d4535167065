"""No function in the three packages takes more than 12 parameters.

Every parameter counts: positional, keyword-only, ``*args``, ``**kwargs``, and ``self``.
A longer list is a typed arguments object (as each MCP tool takes one,
``tasktool.mcp.arguments``) or a value the caller already holds.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGES = Path(__file__).resolve().parents[2] / "packages"
MOST = 12


def parameter_count(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> int:
    given = function.args
    named = [*given.posonlyargs, *given.args, *given.kwonlyargs]
    return len(named) + (given.vararg is not None) + (given.kwarg is not None)


def long_signatures(source: str, name: str) -> list[str]:
    """``file:line function (count)`` for each function of ``source`` over :data:`MOST`."""
    return [
        f"{name}:{node.lineno} {getattr(node, 'name', 'lambda')} ({count})"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        and (count := parameter_count(node)) > MOST
    ]


def test_a_long_signature_is_found() -> None:
    twelve = ", ".join(f"a{i}" for i in range(11))
    source = f"class C:\n    def ok(self, {twelve}): ...\n"
    source += f"    async def long(self, {twelve}, *, b): ...\n"
    source += "f = lambda *a, **k: 0\ng = lambda " + twelve + ", b, c: 0\n"
    assert long_signatures(source, "m.py") == ["m.py:3 long (13)", "m.py:5 lambda (13)"]


@pytest.mark.parametrize("package", ["common", "matchmaker", "tasktool"])
def test_no_function_takes_more_than_twelve_parameters(package: str) -> None:
    sources = sorted((PACKAGES / package / "src").rglob("*.py"))
    assert sources
    found = [
        line
        for path in sources
        for line in long_signatures(path.read_text(encoding="utf-8"), str(path))
    ]
    assert found == []
