"""Rendering: plain tables off a terminal, JSON and YAML."""

from __future__ import annotations

import io
import json

import pytest

from tasktool.model.task import KEPT, Task
from tasktool.model.views import TASK_KEYS, TaskRows, task_views
from tasktool.present import render
from tasktool.present.render import (
    attribute_cells,
    emit_data,
    emit_fields,
    emit_table,
    plain_columns,
    plain_table,
    to_yaml,
    write_json_array,
)


def test_plain_table_is_aligned_and_stable() -> None:
    rows: list[dict[str, object]] = [
        {"id": "1", "title": "Short", "tags": ["a", "b"]},
        {"id": "10", "title": None},
    ]
    assert plain_table(rows, ["id", "title", "tags"]) == ("ID  TITLE  TAGS\n1   Short  a, b\n10\n")


def test_tables_are_plain_when_not_a_terminal() -> None:
    out = io.StringIO()
    emit_table([{"id": "1"}], ["id"], title="group", out=out)
    assert out.getvalue() == "group\nID\n1\n"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_tables_on_a_terminal_are_fitted_with_a_bold_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "40")
    out = Terminal()
    rows = [{"id": "1", "title": "T" * 60, "tags": ["a", "b"]}]
    emit_table(rows, ["id", "title", "tags"], out=out)
    header, row = out.getvalue().splitlines()
    # the title is shortened to fit 40 columns, before any column is dropped
    assert header == "\x1b[1mID  TITLE" + " " * 27 + "TAGS\x1b[0m"
    assert row == "1   " + "T" * 29 + "\u2026  a, b"
    plain = Terminal()
    emit_table(rows, ["id", "title"], no_color=True, out=plain)
    assert "\x1b" not in plain.getvalue()


def test_json_and_yaml_keep_key_order() -> None:
    data = {"b": 1, "a": ("x",), "c": None}
    out = io.StringIO()
    emit_data(data, "json", out)
    assert list(json.loads(out.getvalue())) == ["b", "a", "c"]
    assert to_yaml(data) == "b: 1\na:\n- x\nc: null\n"


@pytest.mark.parametrize("kept", [True, False])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 5, 7])
def test_streamed_rows_are_byte_for_byte_the_dict_json(
    count: int, kept: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tasks with their bodies inline, or none and kept by the parse cache (never read
    for a listing: no store is known here), titles holding what looks like a body, and text that
    is not UTF-8 (a file name's lone surrogate, encoded the careful way)."""
    monkeypatch.setattr(render, "JSON_CHUNK", 2)  # chunk edges: none, exact, one over
    titles = ['t\u00e9 "quoted"', 'x,"body":""}', 'x\\","body":""}', "bad \udce9"]
    tasks = [
        Task(
            id=str(n),
            title=titles[n % len(titles)],
            tags=("a", "b")[: n % 3],
            raw_body=(KEPT if n % 2 else "") if kept else "x" * n,
            owner='",\\' if n % 2 else None,
        )
        for n in range(count)
    ]
    expected, streamed = io.StringIO(), io.BytesIO()
    emit_data(task_views(tasks), "json", expected)
    write_json_array(TaskRows(tasks), streamed.write)
    assert streamed.getvalue().decode("utf-8") == expected.getvalue()
    picked = io.BytesIO()
    write_json_array(TaskRows(tasks, ("tags", "id")), picked.write)
    assert json.loads(picked.getvalue()) == [{"tags": list(t.tags), "id": t.id} for t in tasks]
    assert "body" not in TASK_KEYS


def test_fields_align_keys() -> None:
    out = io.StringIO()
    emit_fields([("id", "1"), ("status", "pending"), ("owner", None)], out=out)
    assert out.getvalue() == "id:     1\nstatus: pending\nowner:\n"


def test_columns_from_attributes_print_what_rows_print() -> None:
    """``list``'s long tables take each column from the tasks' attributes: the text is the
    rows' text, lists, ``None``, booleans and line breaks included."""
    tasks = [
        Task(id="2", title="Two\nlines", tags=("a", "b"), archived=False),
        Task(id="10", title="Ten", status="completed", dependencies=("2",), archived=True),
    ]
    columns = ("id", "title", "tags", "effort", "archived", "dependencies")
    rows = [{key: view[key] for key in columns} for view in task_views(tasks)]
    expected = plain_table(rows, columns)
    assert "Two lines" in expected
    assert "a, b" in expected
    assert "yes" in expected
    cells = [attribute_cells(tasks, column) for column in columns]
    assert plain_columns(columns, cells) == expected
