"""Worklogs: dated notes per task in ``<task dir>/.worklogs/<id>.md``.

Each entry is a ``## <UTC timestamp>`` heading (``2026-01-31T09:15:00Z``, or a date alone,
``2026-01-31``) followed by its text. Reading always works; writing is allowed only with
``worklogs: true`` in the config, and a refusal says so. An append rewrites
the file atomically (temporary file, fsync, rename) under the task's worklog
lock in ``.tasktool/locks/``, so concurrent writers never lose entries.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from tasktool.files.storage import atomic_write_text, locked, read_regular
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task
from tasktool.planning.repository import Repository

__all__ = [
    "Worklog",
    "WorklogEntry",
    "add_entry",
    "format_entry",
    "parse_worklog",
    "read_worklog",
]

#: ``## <UTC timestamp>``, optionally followed by a title (``## 2026-02-19T00:00:00Z —
#: Completed``, as taskmd writes them); a date alone (``## 2026-02-25``, as people write
#: them by hand) is an entry too.
_HEADING = re.compile(
    r"^## (\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)?)"
    r"(?:(?:[ \t]*[-\u2013\u2014:]|[ \t])[ \t]*(\S[^\r\n]*?))?[ \t]*\r?$",
    re.MULTILINE,
)


class WorklogEntry(msgspec.Struct, frozen=True):
    """One entry: its UTC ``timestamp``, its text and the title after the timestamp."""

    timestamp: str
    content: str
    title: str | None = None


class Worklog(msgspec.Struct, frozen=True, kw_only=True):
    """Every entry of one task, oldest first."""

    task_id: str
    entries: tuple[WorklogEntry, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"task_id", "entries": [{"timestamp", "content"}]}``."""
        return {
            "task_id": self.task_id,
            "entries": [msgspec.structs.asdict(entry) for entry in self.entries],
        }


def parse_worklog(text: str) -> list[WorklogEntry]:
    """Entries of a worklog file; text before the first heading (such as taskmd's
    ``# Worklog: <title>`` line) is not an entry."""
    headings = list(_HEADING.finditer(text))
    entries: list[WorklogEntry] = []
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
        entries.append(WorklogEntry(heading[1], text[heading.end() : end].strip(), heading[2]))
    return entries


def format_entry(entry: WorklogEntry) -> str:
    title = f" \u2014 {entry.title}" if entry.title else ""
    return f"## {entry.timestamp}{title}\n\n{entry.content.strip()}\n"


def _read(path: Path) -> str:
    try:
        # Not a plain read: a FIFO in place of the file would block get and worklog forever.
        return read_regular(path)[1].decode("utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskToolError(
            f"cannot read worklog {path}: {getattr(exc, 'strerror', None) or exc}",
            code="worklog.unreadable",
        ) from None


def read_worklog(repo: Repository, task_id: str, *, holder: Task | None = None) -> Worklog:
    """A task's entries; a task with no worklog file has none. ``holder``: the task with
    this id, when the caller has it (see :meth:`Repository.worklog_path`)."""
    text = _read(repo.worklog_path(task_id, holder=holder))
    return Worklog(task_id=task_id, entries=tuple(parse_worklog(text)))


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def add_entry(
    repo: Repository, task_id: str, content: str, *, timestamp: str | None = None
) -> WorklogEntry:
    """Append one entry, if the config allows writing worklogs."""
    if not repo.config.worklogs:
        # The file loaded (taskmd's .taskmd.yaml too); Backlog.md's config.yml holds no
        # tasktool key, so a .tasktool.yaml would be the place there.
        file = repo.loaded.file
        where = file if file and not repo.config.layout.foreign else ".tasktool.yaml"
        raise TaskToolError(
            f"worklogs are disabled, so nothing was written: set `worklogs: true` in "
            f"{where} to allow worklog entries (reading them always works)",
            code="worklog.disabled",
        )
    if not content.strip():
        raise TaskToolError("a worklog entry needs some text", code="worklog.empty")
    path = repo.worklog_path(task_id)
    entry = WorklogEntry(timestamp or _now(), content.strip())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(repo.task_dir, f"worklog-{task_id}"):
            existing = _read(path).rstrip("\n")
            atomic_write_text(path, (existing + "\n\n" if existing else "") + format_entry(entry))
    except OSError as exc:
        raise TaskToolError(f"cannot write worklog {path}: {exc}", code="worklog.write") from None
    return entry
