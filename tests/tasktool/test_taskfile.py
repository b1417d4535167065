"""Task files: the frontmatter split, the fast reader, broken-file detection, names."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from mtcommon import YamlError, load_text
from tasktool.files.parsing import taskfile
from tasktool.files.parsing.frontmatter import _flat, read_frontmatter, repeated_keys
from tasktool.files.parsing.taskfile import (
    BOM,
    parse_task,
    slugify,
    split_frontmatter,
    task_filename,
)
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


@settings(deadline=None)
@given(
    st.lists(st.sampled_from(["---", "--- ", "---\r", "---\u3000", "----", "---x", "id: 1", ""])),
    st.booleans(),
)
def test_split_frontmatter_cuts_at_the_first_closing_line(lines: list[str], bom: bool) -> None:
    """The frontmatter runs from a first ``---`` line (trailing whitespace allowed) to the
    next one, the body from the line after it, whatever shortcut finds them."""
    text = (BOM if bom else "") + "\n".join(lines)
    closing = next((at for at in range(1, len(lines)) if lines[at].rstrip() == "---"), None)
    if not lines or lines[0].rstrip() != "---" or closing is None:
        assert split_frontmatter(text) is None
    else:
        frontmatter = "".join(line + "\n" for line in lines[1:closing])
        assert split_frontmatter(text) == (frontmatter, "\n".join(lines[closing + 1 :]))


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


def _read_the_general_way(text: str) -> Task | Diagnostic | None:
    with mock.patch.object(taskfile, "_flat_task", return_value=None):
        return parse(text)


_WORD = st.tuples(st.sampled_from("aZ09"), st.text("bY1 ._-", max_size=7)).map("".join)
#: Whitespace a YAML loader keeps (or takes for a line break) and ``str.strip`` removes,
#: and plain spaces.
_PADDING = ("", " ", "  ", "\u3000", "\xa0", "\x85", "\u2028")
_PAD = st.sampled_from(_PADDING)
_PADDED = st.tuples(_PAD, _WORD, _PAD).map("".join)
#: Texts that read as null, as one value though they look like more, or not at all
#: (escapes, indicators, a ``: `` or `` #`` inside, a ``:`` last, nesting).
_ODD_TEXTS = (
    *("", "~", "null", "Null", "NULL", "[]", "010", "a: b", "x #c", "a#b", "a:b", "ends:"),
    *("it's", "it''s", "a\\tb", "-1", "? x", "&x y", "*x", "!t x", "|", ">", "@me", "%x"),
    *("x\t#c", "a\rb"),
    *("[ ]", "[a,,b]", "[a, [b]]", "{a: 1}", "[a:, b]", "[a #b]", "[a, b", "- a", "a[b]", "a}"),
)
_ODD = st.sampled_from(_ODD_TEXTS)
_TEXT = st.one_of(_PADDED, _ODD)
_QUOTED = _TEXT.flatmap(lambda text: st.sampled_from([f"'{text}'", f'"{text}"']))
_ITEM = st.one_of(_WORD, st.tuples(_PAD, st.one_of(_TEXT, _QUOTED), _PAD).map("".join))
_ODD_VALUE = st.one_of(
    st.tuples(_PAD, _ODD, _PAD).map("".join),
    _QUOTED,
    st.tuples(
        st.sampled_from(["[", "[ "]), st.lists(_ITEM, max_size=3), st.sampled_from([",", ", "])
    ).map(lambda parts: parts[0] + parts[2].join(parts[1]) + "]"),
)
_SCALAR = st.one_of(_PADDED, _PADDED.map(lambda text: f"'{text}'"))
_LIST = st.lists(st.one_of(_WORD, _WORD.map(repr)), max_size=3).map(lambda w: f"[{', '.join(w)}]")
#: A value of the common kind, or once in ten an odd one.
_SCALAR_VALUE = st.integers(0, 9).flatmap(lambda odd: _SCALAR if odd else _ODD_VALUE)
_VALUE = st.integers(0, 9).flatmap(lambda odd: st.one_of(_SCALAR, _LIST) if odd else _ODD_VALUE)
#: tasktool's fields (but the id and the title) read as one value, the others and keys no
#: field reads.
_SCALAR_FIELD = st.sampled_from(
    ["status", "priority", "effort", "type", "owner", "phase", "parent", "created", "created_at"]
)
_OTHER_FIELD = st.sampled_from(
    ["tags", "dependencies", "touches", "context", "pr", "points", "x-y"]
)
#: Repeated keys, Backlog.md's names, odd spacing, comments, blank lines, other shapes.
_ODD_LINE = st.one_of(
    st.tuples(
        st.sampled_from(["id", "title", "status", "tags", "points", "labels", "assignee"]),
        _VALUE,
    ).map(": ".join),
    st.tuples(_SCALAR_FIELD, st.sampled_from([":  ", ":", ":\t"]), _VALUE, _PAD).map("".join),
    st.sampled_from(["# a comment", "#: x", "# a #b", "", "   ", "- a", "  - b", "  x: y", "key:"]),
)


@settings(deadline=None, max_examples=500)
@given(
    st.tuples(
        _SCALAR_VALUE,
        _SCALAR_VALUE,
        st.dictionaries(_SCALAR_FIELD, _SCALAR_VALUE, max_size=5),
        st.dictionaries(_OTHER_FIELD, _VALUE, max_size=4),
        st.lists(_ODD_LINE, max_size=2),
    ).flatmap(
        lambda drawn: st.permutations(
            [
                f"id: {drawn[0]}",
                f"title: {drawn[1]}",
                *(f"{key}: {value}" for key, value in (drawn[2] | drawn[3]).items()),
                *drawn[4],
            ]
        )
    )
)
def test_the_flat_reader_answers_as_the_general_path(lines: list[str]) -> None:
    """:func:`_flat_task` reads the common frontmatter in one step per line: where it
    answers, the frontmatter reader then ``task_from_mapping`` must have answered the same
    task; where they would fail or say more, it leaves the file to them."""
    text = "---\n" + "\n".join(lines) + "\n---\nThe body.\n"
    frontmatter, body = split_frontmatter(text) or ("", "")
    fast = taskfile._flat_task(
        frontmatter, file_path="/t/x.md", body=body, group=None, archived=False
    )
    event("read by the flat reader" if fast is not None else "left to the general path")
    assert parse(text) == _read_the_general_way(text)
    assert fast is None or fast == parse(text)


@pytest.mark.parametrize(
    "frontmatter",
    [
        _FLAT_TASK,
        "id: '009'\ntitle: paginate build document\nstatus: in-progress\npriority: high\n"
        "effort: small\ntype: bug\nphase: foundation\ndependencies: [003, '007']\n"
        "tags: [tests, bug]\ntouches: []\nowner: bob\ncreated_at: 2025-10-10\n"
        "# estimate from planning\npoints: 3\n",
        'id: 7\ntitle: "Fix: the #1 crash"\ncreated: 2024-01-02\nowner: ~\ntags: [ a, "b c" ]\n',
        "\nid: 7\ntitle: x  \nstatus: ''\npr: '12'\ncontext: [null, a]\nx-y: [1, 2]\n\n",
    ],
)
def test_the_flat_reader_answers_for_the_common_frontmatter(frontmatter: str) -> None:
    """The shapes task files have (every generated one, nearly every written one) take the
    flat reader, which answers as the general path does."""
    text = f"---\n{frontmatter}---\nThe body.\n"
    fast = taskfile._flat_task(
        frontmatter, file_path="/t/x.md", body="The body.\n", group=None, archived=False
    )
    assert fast is not None
    assert fast == _read_the_general_way(text)


def test_odd_values_read_as_the_general_path_reads_them() -> None:
    """Each odd text, plain, quoted or padded, as a field's value, a list's item, a key no
    field reads or a Backlog.md name, or repeated: the flat reader answers as the general
    path does or leaves the file to it."""
    for odd in _ODD_TEXTS:
        for value in (
            *(f"{pad}{odd}" for pad in _PADDING),
            *(f"{odd}{pad}" for pad in _PADDING),
            f"'{odd}'",
            f'"{odd}"',
        ):
            for lines in (
                f"id: {value}\ntitle: x",
                f"id: 7\ntitle: x\nstatus: {value}",
                f"id: 7\ntitle: x\ntags: {value}",
                f"id: 7\ntitle: x\ntags: [a, {value}]",
                f"id: 7\ntitle: x\ntags: [{value} ]",
                f"id: 7\ntitle: x\npoints: {value}",
                f"id: 7\ntitle: x\nlabels: {value}",
                f"id: 7\ntitle: x\npoints: 3\npoints: {value}",
            ):
                text = f"---\n{lines}\n---\n"
                assert parse(text) == _read_the_general_way(text), text
