"""The one error root both products raise.

::

    CodedError                      (mtcommon)
     ├── YamlError                  (mtcommon.yamlio)
     ├── matchmaker.errors.*        (matchmaker subclasses)
     └── tasktool.model.errors.*    (tasktool subclasses)

A ``CodedError`` carries a stable dotted ``code`` that clients may match on
(``project.lockdown``, ``config.effort.duplicate``), a human ``message`` that
may change between releases, and optional JSON-safe ``details``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
