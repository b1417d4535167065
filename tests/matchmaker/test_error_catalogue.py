"""One error catalogue: every code the matchmaker raises is catalogued and documented, and
every catalogued or documented code is raised somewhere.

The code side is read from the source (every ``code="..."`` given to an error, every
class-level ``code = "..."``), the docs side from the error tables of
``docs/protocol.md`` and ``docs/control-plane.md``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import TypeGuard

import pytest

import matchmaker
import mtcommon.cli
from matchmaker.core import closecodes
from matchmaker.errors import CATALOGUE

SOURCE = Path(matchmaker.__file__).parent
DOCS = Path(__file__).parents[2] / "docs"
CODE = re.compile(r"^[a-z_]+(\.[a-z_]+)+$")


def _raised_codes() -> dict[str, list[str]]:
    """Every code literal the source gives an error, with where it appears."""
    found: dict[str, list[str]] = {}
    # mtcommon.cli raises the command line's usage errors for the matchmaker CLI.
    for path in [*sorted(SOURCE.rglob("*.py")), Path(mtcommon.cli.__file__)]:
        where = path.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            values: list[ast.expr] = []
            if isinstance(node, ast.keyword) and node.arg == "code":
                values.append(node.value)
            elif isinstance(node, ast.arguments):  # a ``code`` parameter's default
                pairs = zip(node.kwonlyargs, node.kw_defaults, strict=True)
                values += [default for arg, default in pairs if arg.arg == "code" and default]
            elif isinstance(node, ast.ClassDef):
                values += [
                    stmt.value
                    for stmt in node.body
                    if isinstance(stmt, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "code" for t in stmt.targets)
                ]
            elif (
                isinstance(node, ast.Assign)
                and any(
                    isinstance(t, ast.Name) and t.id.startswith("_CODE_BY") for t in node.targets
                )
                and isinstance(node.value, ast.Dict)
            ):
                values += [v for v in node.value.values if v is not None]
            for value in values:
                for constant in ast.walk(value):
                    if isinstance(constant, ast.Constant) and _is_code(constant.value):
                        found.setdefault(constant.value, []).append(where)
    return found


def _is_code(value: object) -> TypeGuard[str]:
    """Codes are dotted, but for the command line's ``usage`` (shared with tasktool)."""
    return isinstance(value, str) and (CODE.match(value) is not None or value in CATALOGUE)


def _table(doc: str, heading: str) -> list[list[str]]:
    """The rows of the first table under ``heading`` (cells stripped), header excluded."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    start = re.search(rf"^#+ {re.escape(heading)}\s*$", text, re.MULTILINE)
    assert start is not None, f"{doc} has no section {heading!r}"
    rows: list[list[str]] = []
    for line in text[start.end() :].splitlines():
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert len(rows) > 2, f"{doc} § {heading}: no table"
    return rows[2:]


def _codes_in(cell: str) -> set[str]:
    return {c for c in re.findall(r"`([^`]+)`", cell) if _is_code(c)}


def _documented(doc: str, heading: str, column: int) -> dict[str, list[str]]:
    """Documented code -> the other cells of its row."""
    out: dict[str, list[str]] = {}
    for row in _table(doc, heading):
        for code in _codes_in(row[column]):
            assert code not in out, f"{code} documented twice in {doc} § {heading}"
            out[code] = row
    return out


RAISED = _raised_codes()


def test_every_raised_code_is_catalogued() -> None:
    stray = {code: where for code, where in RAISED.items() if code not in CATALOGUE}
    assert stray == {}, "add these codes to matchmaker.errors.CATALOGUE and the docs"


def test_every_catalogued_code_is_raised() -> None:
    unused = sorted(set(CATALOGUE) - set(RAISED))
    assert unused == [], "catalogued but raised nowhere: remove them (and their docs rows)"


def test_data_plane_codes_match_the_protocol_table() -> None:
    documented = _documented("protocol.md", "Error codes", 0)
    assert set(documented) == {c for c, spec in CATALOGUE.items() if "data" in spec.surfaces}


def test_client_library_codes_match_their_table() -> None:
    documented = _documented("protocol.md", "Client library errors", 0)
    assert set(documented) == {c for c, spec in CATALOGUE.items() if "client" in spec.surfaces}


def test_http_codes_match_the_control_plane_table_with_their_status() -> None:
    documented = _documented("control-plane.md", "Errors", 1)
    expected = {c: spec.http for c, spec in CATALOGUE.items() if spec.http is not None}
    assert {code: int(row[0]) for code, row in documented.items()} == expected


def test_startup_codes_match_their_table_with_their_exit_status() -> None:
    documented = _documented("control-plane.md", "Startup errors", 1)
    expected = {c: spec.exit for c, spec in CATALOGUE.items() if spec.exit is not None}
    assert {code: int(row[0]) for code, row in documented.items()} == expected


def test_admin_cli_codes_match_their_table() -> None:
    documented = _documented("operations.md", "Admin CLI errors", 0)
    assert set(documented) == {c for c, spec in CATALOGUE.items() if "admin" in spec.surfaces}


def test_simulator_codes_match_their_table() -> None:
    documented = _documented("modes.md", "Simulator errors", 0)
    assert set(documented) == {c for c, spec in CATALOGUE.items() if "simulate" in spec.surfaces}


def test_every_code_has_a_surface() -> None:
    nowhere = [c for c, s in CATALOGUE.items() if not (s.surfaces or s.http or s.exit)]
    assert nowhere == []


@pytest.mark.parametrize(
    "name", [n for n in closecodes.__all__ if isinstance(getattr(closecodes, n), int)]
)
def test_every_close_code_is_documented_and_used(name: str) -> None:
    documented = {row[0] for row in _table("protocol.md", "Close codes")}
    assert str(getattr(closecodes, name)) in documented
    users = [
        path
        for path in SOURCE.rglob("*.py")
        if path.name != "closecodes.py" and f"closecodes.{name}" in path.read_text("utf-8")
    ]
    assert users, f"closecodes.{name} is never used"
