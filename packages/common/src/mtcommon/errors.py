"""The one error root both products raise.

::

    CodedError                      (mtcommon)
     ├── YamlError                  (mtcommon.yamlio)
     ├── matchmaker.errors.*        (matchmaker subclasses)
     └── tasktool.model.errors.*    (tasktool subclasses)

A ``CodedError`` carries a stable dotted ``code`` that clients may match on
(``project.lockdown``, ``config.effort.duplicate``), a human ``message`` that
may change between releases, and optional JSON-safe ``details``.

Each product keeps every code it may raise in one :class:`Catalogue` of
:class:`ErrorCode` entries (``tasktool.model.errors.CATALOGUE``,
``matchmaker.errors.CATALOGUE``): its front ends look up an exit or HTTP status there,
and its catalogue test compares the entries with the codes raised and the docs' tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

__all__ = [
    "Catalogue",
    "CodedError",
    "ErrorCode",
    "render_json",
    "render_line",
    "render_usage",
]


class CodedError(Exception):
    """An error with a stable dotted code, a human message and optional details."""

    code: str = "error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.details: dict[str, Any] | None = dict(details) if details else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"

    def to_payload(self) -> dict[str, Any]:
        """The inner ``{"code", "message", "details"?}`` object."""
        payload: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            payload["details"] = self.details
        return payload


class ErrorCode(NamedTuple):
    """One code of a product's catalogue: what it means and where it is reported (a
    named tuple: ``dataclasses`` is more than a read command of tasktool imports)."""

    meaning: str = ""
    """The line a product's docs table gives it (tasktool documents each meaning)."""
    exit: int | None = None
    """The exit status of a command it stops; ``None``: it never stops one alone."""
    http: int | None = None
    """The HTTP status of a response carrying it; ``None``: no HTTP response does."""
    surfaces: frozenset[str] = frozenset()
    """The other places a product reports it, each documented in its own table
    (matchmaker: ``data`` replies, the Python ``client``, ``admin``)."""


class Catalogue(Mapping[str, ErrorCode]):
    """Every code a product may raise, and how each is reported."""

    def __init__(self, entries: Mapping[str, ErrorCode]) -> None:
        self._entries = dict(entries)

    def __getitem__(self, code: str) -> ErrorCode:
        return self._entries[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def exit_status(self, code: str) -> int:
        """The exit status for an error with ``code`` (1 for anything without one)."""
        entry = self._entries.get(code)
        return entry.exit if entry is not None and entry.exit is not None else 1

    def http_status(self, code: str) -> int:
        """The HTTP status for an error with ``code`` (500 for anything without one)."""
        entry = self._entries.get(code)
        return entry.http if entry is not None and entry.http is not None else 500


def render_json(error: CodedError) -> dict[str, Any]:
    """The HTTP/WebSocket body: ``{"error": {"code", "message", "details"?}}``."""
    return {"error": error.to_payload()}


def render_line(error: CodedError) -> str:
    """A one-line CLI message: ``error: <message> [<code>]`` (newlines folded)."""
    message = " ".join(error.message.split())
    return f"error: {message} [{error.code}]"


def render_usage(message: str, command_path: str | None = None, *, code: str = "usage") -> str:
    """A one-line CLI usage error: ``error: <message> (see '<command> --help') [<code>]``.

    Both products print a malformed command line this way, with exit status 2; ``code``
    names a more precise usage code where there is one (tasktool's ``filter.field``).
    """
    message = " ".join(message.split())
    hint = f" (see '{command_path} --help')" if command_path else ""
    return f"error: {message}{hint} [{code}]"
