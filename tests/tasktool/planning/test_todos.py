"""``todos``: markers in comments only, per language, with stable ids."""

from __future__ import annotations

import pytest

from tasktool.planning.todos import scan_text


@pytest.mark.parametrize(
    ("path", "text", "found"),
    [
        ("a.py", "x = 1  # TODO: tidy\n", [("TODO", "tidy", 1)]),
        ("a.py", 's = "# TODO not a comment"\n', []),
        ("a.py", '"""TODO in a docstring"""\n# FIXME(ann): real\n', [("FIXME", "real", 2)]),
        ("a.c", "/* line one\n * HACK: two\n */ int x;\n", [("HACK", "two", 2)]),
        ("a.c", 'char *s = "// XXX no";\n// XXX yes\n', [("XXX", "yes", 2)]),
        ("a.ts", "const s = `// TODO no`; // BUG: yes\n", [("BUG", "yes", 1)]),
        ("a.go", "// TODO one\n// TODO two\n", [("TODO", "one", 1), ("TODO", "two", 2)]),
        ("a.sql", "select 1; -- TODO index\n", [("TODO", "index", 1)]),
        ("a.lua", "--[[ multi\nFIXME: x ]]\n-- TODO y\n", [("FIXME", "x", 2), ("TODO", "y", 3)]),
        ("a.html", "<p>TODO</p><!-- TODO: fix -->\n", [("TODO", "fix", 1)]),
        ("a.css", "a { color: red; } /* TODO colour */\n", [("TODO", "colour", 1)]),
        ("Makefile", "all: # TODO targets\n", [("TODO", "targets", 1)]),
        ("a.py", "# todo lowercase, TODOS, XXXX\n", []),
        ("a.bin", "# TODO unknown kind\n", []),
        ("a.rs", "/* TODO unterminated\n", [("TODO", "unterminated", 1)]),
    ],
)
def test_markers(path: str, text: str, found: list[tuple[str, str, int]]) -> None:
    assert [(todo.marker, todo.text, todo.line) for todo in scan_text(path, text)] == found


def test_author_and_json() -> None:
    (todo,) = scan_text("a.py", "# TODO(ann): ship it\n")
    assert todo.to_json() == {
        "id": todo.id,
        "marker": "TODO",
        "text": "ship it",
        "file": "a.py",
        "line": 1,
        "author": "ann",
    }


def test_ids_are_stable_across_moves_and_distinct_for_duplicates() -> None:
    before = scan_text("a.py", "# TODO one\n# TODO one\n")
    after = scan_text("a.py", "\n\nx = 1\n# TODO one\n\n# TODO one\n")
    assert [t.id for t in before] == [t.id for t in after]
    assert len({t.id for t in before}) == 2
    assert scan_text("b.py", "# TODO one\n")[0].id != before[0].id
