"""Rewriting frontmatter with ruamel round-trip: comments, key order and unknown keys survive.

Only the keys being changed are touched; the body after the closing ``---``
is kept byte for byte. ruamel is imported here only, on the write path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mtcommon import dump_roundtrip, load_roundtrip
from tasktool.files.frontmatter import repeated_keys
from tasktool.files.taskfile import BOM, split_frontmatter
from tasktool.model.errors import TaskToolError

_TAB_AFTER_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):\t[ \t]*", re.MULTILINE)
#: Key order for new task files.
FIELD_ORDER = (
    "id",
    "title",
    "status",
    "priority",
    "effort",
    "type",
    "phase",
    "dependencies",
    "tags",
    "touches",
    "context",
    "owner",
    "parent",
    "created_at",
    "completed_at",
    "cancelled_at",
    "pr",
    "external_id",
)


def _flow_list(items: list[str]) -> Any:
    from ruamel.yaml.comments import CommentedSeq

    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


def _check_text(what: str, value: Any) -> None:
    """Refuse text that is not Unicode: undecodable argument bytes arrive as lone
    surrogates, which YAML would write as escapes no reader accepts."""
    for item in value if isinstance(value, list | tuple) else (value,):
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise TaskToolError(
                    f"{what}: not valid UTF-8 text: {item!r}", code="task.invalid_text"
                ) from None


def _apply(data: Any, updates: Mapping[str, Any]) -> None:
    from ruamel.yaml.comments import CommentedSeq

    for key, value in updates.items():
        _check_text(key, value)
        if value is None:
            if key in data:
                del data[key]
            if key == "created_at" and "created" in data:
                del data["created"]
        elif key == "created_at" and "created" in data and "created_at" not in data:
            data["created"] = value  # keep the alias the file already uses
        elif isinstance(value, list):
            current = data.get(key)
            if isinstance(current, CommentedSeq):
                current[:] = value  # in place: keeps flow or block style and comments
            else:
                data[key] = _flow_list(value)
        else:
            data[key] = value


def apply_frontmatter(
    text: str, updates: Mapping[str, Any], *, source: str, body: str | None = None
) -> str:
    """``text`` with ``updates`` applied to its frontmatter (``None`` deletes a key)."""
    parts = split_frontmatter(text)
    if parts is None:
        raise TaskToolError(f"{source}: no frontmatter block to edit", code="task.frontmatter")
    frontmatter, old_body = parts
    _check_text("body", body)
    repeated = repeated_keys(frontmatter)
    if repeated:  # ruamel would keep the first value where readers see the last
        raise TaskToolError(
            f"{source}: the key {repeated[0]!r} appears more than once; fix the file first",
            code="task.duplicate_key",
        )
    # The pure-Python loader rejects a tab after ``key:`` that the C reader accepts.
    data = load_roundtrip(_TAB_AFTER_KEY.sub(r"\1: ", frontmatter), source=source)
    if data is None:
        data = load_roundtrip("{}\n")
    _apply(data, updates)
    head = f"---\n{dump_roundtrip(data)}---\n"
    # Keep the file's byte order mark and line endings; the body is kept as it is.
    if text.removeprefix(BOM).startswith("---\r\n"):
        head = head.replace("\n", "\r\n")
    bom = BOM if text.startswith(BOM) else ""
    return f"{bom}{head}{old_body if body is None else body}"


def new_task_text(fields: Mapping[str, Any], body: str = "") -> str:
    """A new task file: frontmatter in :data:`FIELD_ORDER`, lists in flow style."""
    from ruamel.yaml.comments import CommentedMap

    _check_text("body", body)
    data = CommentedMap()
    ordered = sorted(fields, key=lambda k: FIELD_ORDER.index(k) if k in FIELD_ORDER else 99)
    _apply(data, {key: fields[key] for key in ordered if fields[key] is not None})
    text = body if not body or body.endswith("\n") else body + "\n"
    return f"---\n{dump_roundtrip(data)}---\n{text}"
