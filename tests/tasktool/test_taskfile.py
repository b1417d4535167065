"""Task files: the frontmatter split, the fast reader, broken-file detection, names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtcommon import YamlError, load_text
from tasktool.files.parsing.frontmatter import _flat, read_frontmatter, repeated_keys
from tasktool.files.parsing.taskfile import parse_task, slugify, split_frontmatter, task_filename
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task


def parse(text: str) -> Task | Diagnostic | None:
    return parse_task(text, file_path="/t/x.md", group=None, archived=False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\nid: 1\n---\nbody\n", ("id: 1\n", "body\n")),
        ("---\nid: 1\n---", ("id: 1\n", "")),
        ("---\r\nid: 1\r\n---\r\nb", ("id: 1\r\n", "b")),
        ("---\n---\n", ("", "")),
        ("---\na: 1\n----\nb: 2\n---\nrest", ("a: 1\n----\nb: 2\n", "rest")),
        ("---\nid: 1\n", None),
        ("no frontmatter\n---\n", None),
        ("----\nid: 1\n---\n", None),
    ],
)
def test_split_frontmatter(text: str, expected: tuple[str, str] | None) -> None:
    assert split_frontmatter(text) == expected


def test_fields_are_text_and_aliases_apply() -> None:
    task = parse(
        "---\nid: 010\ntitle: Ship it\ncreated: 2024-01-02\nowner: null\ndependencies:\n"
        "  - '9'\n  - 11\ntags: [a, b]\npoints: 3\n---\nThe body.\n"
    )
    assert isinstance(task, Task)
    assert (task.id, task.status, task.created_at, task.owner) == (
        "010",
        "pending",
        "2024-01-02",
        None,
    )
    assert task.dependencies == ("9", "11")
    assert task.tags == ("a", "b")
    assert task.raw_body == "The body.\n"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("---\nid: 5\ntitle: [unclosed\n---\n", "task.yaml"),
        ("---\nid: 5\nstatus: pending\n", "task.frontmatter"),
        ("---\nid: 5\nstatus: pending\n---\n", "task.missing_title"),
        ("---\ntitle: x\nstatus: pending\n---\n", "task.missing_id"),
        ("---\nid: 5\ntitle: x\ndependencies: {a: 1}\n---\n", "task.field_type"),
        ("---\nid: 5\ntitle: {a: 1}\n---\n", "task.field_type"),
    ],
)
def test_task_like_files_that_fail_are_reported(text: str, code: str) -> None:
    result = parse(text)
    assert isinstance(result, Diagnostic)
    assert (result.code, result.severity, result.file) == (code, "error", "/t/x.md")
    assert result.message.startswith("/t/x.md")


@pytest.mark.parametrize("width", [7, 8, 11])
def test_conflict_markers_of_seven_characters_or_more_are_a_merge_conflict(width: int) -> None:
    """git writes longer markers for a conflict inside another (a rename's uses eight)."""
    opening, closing = "<" * width, ">" * width
    text = (
        f"---\n{opening} HEAD:tasks/5-a.md\nid: 5\ntitle: ours\n=======\n"
        f"id: 6\ntitle: theirs\n{closing} topic:tasks/6-a.md\n---\n"
    )
    result = parse(text)
    assert isinstance(result, Diagnostic)
    assert result.code == "task.merge_conflict"
    assert result.message.startswith(f"/t/x.md:2: an unresolved merge conflict ({opening} line)")


@pytest.mark.parametrize(
    "text",
    ["# Readme\n", "---\ntitle: A page\nlayout: doc\n---\n", "---\nbad: [\n---\n", ""],
)
def test_other_markdown_is_skipped_silently(text: str) -> None:
    assert parse(text) is None


def test_slug_and_filename() -> None:
    assert slugify("Fix: the *login* bug!") == "fix-the-login-bug"
    assert len(slugify("x" * 80)) == 50
    assert slugify("!!!") == "task"
    # Letters of every script are kept (NFC), never dropped.
    assert slugify("Исправить ошибку") == "исправить-ошибку"
    assert slugify("e\u0301moji_support") == "émoji-support"
    assert slugify("修复 登录") == "修复-登录"
    assert task_filename("007", "Add OAuth") == "007-add-oauth.md"


_plain = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ./:#,_-]{0,20}", fullmatch=True)
_scalar = st.one_of(
    _plain,
    _plain.map(lambda s: f"'{s}'"),
    _plain.map(lambda s: f'"{s}"'),
    st.sampled_from(
        [
            "",
            "~",
            "null",
            "010",
            "-1",
            "a: b",
            "x #c",
            "[a, b]",
            "[]",
            "{a: 1}",
            "it's",
            "fix [bug]",
            "[a:b, c]",
            "[a, 'b c', \"d\"]",
            "a:b",
            "x:",
            "[x:]",
            "[a, [b]]",
            "[a,,b]",
            "'it''s'",
            '"a\\tb"',
            "[ ]",
            "a # b",
            "a#b",
            "? x",
            "&x y",
            "*x",
            "!t x",
            "|",
            ">",
        ]
    ),
)
_key = st.from_regex(r"[a-z][a-z_-]{0,8}", fullmatch=True)
_line = st.one_of(
    st.tuples(_key, _scalar).map(lambda kv: f"{kv[0]}: {kv[1]}".rstrip()),
    st.tuples(_key, st.lists(_plain, max_size=3), st.sampled_from(["", "  "])).map(
        lambda k: f"{k[0]}:" + "".join(f"\n{k[2]}- {item}" for item in k[1])
    ),
    st.just("# a comment"),
    st.just(""),
    st.just("  indented: x"),
)


@settings(deadline=None)
@given(st.lists(_line, max_size=8))
def test_fast_reader_agrees_with_the_c_loader(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    try:
        expected = load_text(text)
    except YamlError:
        with pytest.raises(YamlError):
            read_frontmatter(text, source="x")
        return
    if isinstance(expected, dict) and repeated_keys(text):
        # The loader lets the last value win; the reader refuses the ambiguity.
        with pytest.raises(YamlError) as raised:
            read_frontmatter(text, source="x")
        assert raised.value.code == "yaml.duplicate_key"
        return
    assert read_frontmatter(text, source="x") == expected


_FLAT_TASK = (
    "id: '003'\ntitle: tables index cache   \n"
    + """status: pending
# estimate from planning
dependencies: [002, '004']

tags: []
owner: bob
"""
)


def test_a_flat_frontmatter_is_read_in_one_pass_as_the_loader_reads_it() -> None:
    """Nearly every task file is flat: the regex pass answers it, as ``load_text`` does;
    a block list or an indented line is another shape (the line loop reads it)."""
    flat = _flat(_FLAT_TASK)
    assert flat == load_text(_FLAT_TASK)
    assert flat is not None
    assert flat["title"] == "tables index cache"
    assert _flat(_FLAT_TASK + "touches:\n- db\n") is None
    assert _flat(_FLAT_TASK + "  more: x\n") is None
    assert _flat("title: a\n  continued\n") is None
    assert read_frontmatter("title: a # b\n", source="x") == {"title": "a"}  # the loader's
    for wrong in ("title: ends:\n", "title: a: b\n"):
        with pytest.raises(YamlError):
            read_frontmatter(wrong, source="x")
