"""One error catalogue: every code raised is catalogued and documented, and every catalogued
code is raised somewhere.

The source scan reads string constants, so codes are written literally where raised (a code
built with an f-string is refused: the scan could not see it).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tasktool.config.backlogmd import BACKLOG_CONFIG
from tasktool.config.options import OPTIONS
from tasktool.model.errors import CATALOGUE, exit_status, http_status

ROOT = Path(__file__).resolve().parents[2]
TASKTOOL_SRC = ROOT / "packages/tasktool/src/tasktool"
COMMON_SRC = ROOT / "packages/common/src/mtcommon"
DOCS = ROOT / "docs/tasktool.md"

NAMESPACES = sorted({code.partition(".")[0] for code in CATALOGUE})
CODE = re.compile(rf"^({'|'.join(NAMESPACES)})(\.[a-z_]+)+$")
#: Dotted config keys (``id.length``) share the ``id`` namespace, and Backlog.md's
#: ``config.yml`` the ``config`` one; they are not codes.
CONFIG_KEYS = {option.key for option in OPTIONS} | {BACKLOG_CONFIG}


def string_constants(root: Path) -> dict[str, set[str]]:
    """Every string constant under ``root`` -> the files (relative) that hold it."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.setdefault(node.value, set()).add(str(path.relative_to(root)))
    return found


def raised_codes() -> dict[str, set[str]]:
    """Code-shaped constants in tasktool's source (config keys aside)."""
    return {
        text: files
        for text, files in string_constants(TASKTOOL_SRC).items()
        if CODE.match(text) and text not in CONFIG_KEYS
    }


def test_every_code_in_the_source_is_catalogued() -> None:
    uncatalogued = {code: files for code, files in raised_codes().items() if code not in CATALOGUE}
    assert uncatalogued == {}


def test_every_catalogued_code_is_raised() -> None:
    seen = set(string_constants(TASKTOOL_SRC)) | set(string_constants(COMMON_SRC))
    assert sorted(set(CATALOGUE) - seen) == []


def test_no_code_is_built_at_run_time() -> None:
    built: list[str] = []
    prefix = re.compile(rf"^({'|'.join(NAMESPACES)})\.[a-z_.]*$")
    for path in sorted(TASKTOOL_SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr) and node.values:
                head = node.values[0]
                if isinstance(head, ast.Constant) and prefix.match(str(head.value)):
                    built.append(f"{path.relative_to(TASKTOOL_SRC)}: {ast.unparse(node)}")
    assert built == []


def documented_rows() -> dict[str, tuple[str, str, str]]:
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("\n## Errors\n") :]
    section = section[: section.index("\n## ", 1)]
    rows: dict[str, tuple[str, str, str]] = {}
    for line in section.splitlines():
        match = re.fullmatch(r"\| `([^`]+)` \| (\S+) \| (\S+) \| (.+) \|", line)
        if match:
            code, exit_, http, meaning = match.groups()
            assert code not in rows, f"{code} documented twice"
            rows[code] = (exit_, http, meaning)
    return rows


def test_the_docs_table_is_the_catalogue() -> None:
    expected = {
        code: (
            "—" if entry.exit is None else str(entry.exit),
            "—" if entry.http is None else str(entry.http),
            entry.meaning,
        )
        for code, entry in CATALOGUE.items()
    }
    table = "\n".join(f"| `{code}` | {' | '.join(row)} |" for code, row in expected.items())
    assert documented_rows() == expected, f"docs/tasktool.md, ## Errors, should list:\n{table}"


def test_statuses_come_from_the_catalogue() -> None:
    assert (exit_status("task.not_found"), http_status("task.not_found")) == (1, 404)
    assert (exit_status("filter.field"), http_status("filter.field")) == (2, 400)
    assert (exit_status("task.conflict"), http_status("task.conflict")) == (1, 409)
    assert (exit_status("no.such_code"), http_status("no.such_code")) == (1, 500)
    # A finding has no status of its own; if it ever stops a command, it fails like a bug.
    assert (exit_status("task.parent_cycle"), http_status("task.parent_cycle")) == (1, 500)
