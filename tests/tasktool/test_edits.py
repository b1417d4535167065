"""Edits change only what they must: byte-exact writes through the real CLI and a
hypothesis property on the line editor (the diff touches only the changed field)."""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tasktool.cli.main import main as cli
from tasktool.files.parsing.frontmatter import read_frontmatter
from tasktool.files.parsing.roundtrip import apply_frontmatter
from tasktool.files.parsing.taskfile import split_frontmatter
from tasktool.files.parsing.yamltext import double_quoted
from tasktool.model.errors import TaskToolError

if TYPE_CHECKING:
    from pathlib import Path

    from tests.tasktool.conftest import Project


def run(project: Project, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), env=project.env, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def put(project: Project, name: str, data: bytes) -> Path:
    path = project.root / "tasks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_crlf_line_with_a_comment_is_not_corrupted(in_project: Project) -> None:
    project = in_project
    before = (
        b"---\r\nid: '1'\r\ntitle: T\r\nstatus: pending # was blocked\r\n"
        b"owner:\tann   # lead\r\n---\r\nBody\r\n"
    )
    path = put(project, "1-t.md", before)
    run(project, "set", "1", "--status", "in-progress")
    assert path.read_bytes() == before.replace(b"pending # was", b"in-progress # was")


def test_set_leaves_untouched_lines_alone(in_project: Project) -> None:
    project = in_project
    before = (
        "\ufeff---\n"
        'id: "7"\n'
        "title:   Spaced   # a comment\n"
        "\n"
        "# a block comment\n"
        "status: pending\n"
        "x_note: 'single'   # note\n"
        "x_map: {a: 1,   b: 2}\n"
        "priority: low\n"
        "---\n"
        "Body without newline"
    ).encode()
    path = put(project, "7-t.md", before)
    run(project, "set", "7", "--priority", "high")
    assert path.read_bytes() == before.replace(b"priority: low", b"priority: high")


def test_list_edits_keep_style_quoting_and_comments(in_project: Project) -> None:
    project = in_project
    put(project, "001-a.md", b"---\nid: '001'\ntitle: A\n---\n")
    put(project, "002-b.md", b"---\nid: '002'\ntitle: B\n---\n")
    flow = put(project, "3-c.md", b'---\nid: "3"\ntitle: C\ntags: ["001", b]  # why\n---\n')
    block = put(
        project,
        "4-d.md",
        b"---\nid: '4'\ntitle: D\ndependencies:\n  - \"001\"  # first\n  # spacer\n---\n",
    )
    run(project, "set", "3", "--add-tag", "c")
    assert flow.read_bytes() == b'---\nid: "3"\ntitle: C\ntags: ["001", b, "c"]  # why\n---\n'
    run(project, "set", "4", "--add-dep", "002")
    assert block.read_bytes() == (
        b'---\nid: \'4\'\ntitle: D\ndependencies:\n  - "001"  # first\n  - "002"\n  # spacer\n---\n'
    )
    run(project, "set", "4", "--remove-dep", "001", "--remove-dep", "002")
    assert block.read_bytes() == b"---\nid: '4'\ntitle: D\n---\n"  # no `dependencies: []`


def test_removing_the_last_flow_item_removes_the_key(in_project: Project) -> None:
    project = in_project
    path = put(project, "1-a.md", b"---\nid: '1'\ntitle: A\ntags: [x]\nowner: me\n---\n")
    run(project, "set", "1", "--remove-tag", "x")
    assert path.read_bytes() == b"---\nid: '1'\ntitle: A\nowner: me\n---\n"


def test_add_writes_a_plain_date_and_no_empty_body(in_project: Project) -> None:
    project = in_project
    (project.root / "tasks").mkdir()
    view = json.loads(run(project, "add", "Hello", "--format", "json"))
    text = (project.root / view["file_path"]).read_text(encoding="utf-8")
    created = view["created_at"]
    assert f"\ncreated_at: {created}\n" in text
    assert text.endswith("---\n")


def test_cli_refuses_a_duplicated_id_naming_both_files(in_project: Project) -> None:
    project = in_project
    first = put(project, "5-a.md", b"---\nid: '5'\ntitle: A\n---\n")
    second = put(project, "x/5-b.md", b"---\nid: '5'\ntitle: B\n---\n")
    for args in (("get", "5"), ("worklog", "5"), ("rm", "5"), ("archive", "5", "--force")):
        output = run(project, *args, code=1)
        assert "[task.ambiguous_id]" in output
        assert str(first.relative_to(project.root)) in output
        assert str(second.relative_to(project.root)) in output
    assert first.exists()
    assert second.exists()


# --- the property ------------------------------------------------------------------------

_SPECIALS = "\x85\u2028\u2029\t\"'#:,[]{}- \\"
_text = st.text(
    alphabet=st.one_of(st.characters(exclude_categories=["Cs"]), st.sampled_from(list(_SPECIALS))),
    max_size=12,
)


@st.composite
def scalar_token(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["plain", "single", "double"]))
    if kind == "plain":
        return draw(st.from_regex(r"[A-Za-z][A-Za-z0-9 ._/-]{0,10}[A-Za-z0-9]", fullmatch=True))
    value = draw(_text)
    if (
        kind == "single"
        and all(c not in "\n\r\x85\u2028\u2029" for c in value)
        and all(c.isprintable() or c == "\t" for c in value)
    ):
        return "'" + value.replace("'", "''") + "'"
    return double_quoted(value)


@st.composite
def task_file(draw: st.DrawFn) -> tuple[str, str]:
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    keys = draw(
        st.lists(
            st.sampled_from(["owner", "phase", "x_a", "x_b", "tags", "dependencies", "context"]),
            unique=True,
            max_size=6,
        )
    )
    lines = ["---", "id: '1'", f"title: {draw(scalar_token())}"]
    for key in keys:
        comment = draw(st.sampled_from(["", "  # c", " #x", "\t# tab"]))
        if draw(st.booleans()):
            lines.append(f"# about {key}")
        if key in {"tags", "dependencies", "context"}:
            items = draw(st.lists(scalar_token(), min_size=1, max_size=3))
            if draw(st.booleans()):
                lines.append(f"{key}: [{', '.join(items)}]{comment}")
            else:
                lines.append(f"{key}:{comment}")
                lines.extend(f"  - {item}" for item in items)
        else:
            lines.append(f"{key}: {draw(scalar_token())}{comment}")
        if draw(st.booleans()):
            lines.append("")
    text = newline.join([*lines, "---", "Body \u2028 line", ""])
    return text, newline


@settings(deadline=None, max_examples=150)
@given(
    task_file(),
    st.sampled_from(["owner", "phase", "status", "tags", "context"]),
    st.one_of(_text.filter(str.strip), st.lists(_text.filter(str.strip), max_size=3)),
)
def test_one_set_touches_only_its_field(
    document: tuple[str, str], field: str, value: str | list[str]
) -> None:
    text, newline = document
    if field in {"tags", "context"}:
        value = value if isinstance(value, list) else [value]
    elif isinstance(value, list):
        value = value[0] if value else "x"
    before = split_frontmatter(text)
    assert before is not None
    old_data = read_frontmatter(before[0], source="t.md")
    edited = apply_frontmatter(text, {field: value}, source="t.md")
    after = split_frontmatter(edited)
    assert after is not None
    assert after[1] == before[1]  # the body, byte for byte
    new_data = read_frontmatter(after[0], source="t.md")
    assert new_data.get(field) == (value or None)
    assert {k: v for k, v in new_data.items() if k != field} == {
        k: v for k, v in old_data.items() if k != field
    }
    old_lines = before[0].split("\n")
    new_lines = after[0].split("\n")
    span = _span(old_lines, field)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if span is not None:
            assert span[0] <= i1, (tag, old_lines[i1:i2], new_lines[j1:j2])
            assert i2 <= span[1], (tag, old_lines[i1:i2], new_lines[j1:j2])
        else:
            assert i1 == i2  # a new key is inserted, nothing else changes
            assert new_lines[j1].startswith(f"{field}:")
    assert all(line.endswith("\r") for line in new_lines[:-1]) == (newline == "\r\n")


def _span(lines: list[str], field: str) -> tuple[int, int] | None:
    for index, line in enumerate(lines):
        if line.startswith(f"{field}:"):
            end = index + 1
            while end < len(lines) and lines[end].startswith("  - "):
                end += 1
            return index, end
    return None


@settings(deadline=None, max_examples=30)
@given(task_file(), _text, st.integers(0xD800, 0xDFFF))
def test_a_lone_surrogate_is_refused_not_written(
    document: tuple[str, str], value: str, surrogate: int
) -> None:
    """Undecodable argument bytes arrive as lone surrogates: refused, nothing changes."""
    with pytest.raises(TaskToolError) as info:
        apply_frontmatter(document[0], {"owner": value + chr(surrogate)}, source="t.md")
    assert info.value.code == "task.invalid_text"
