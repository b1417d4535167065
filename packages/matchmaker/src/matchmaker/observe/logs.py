"""Structured log lines: one JSON object per line (``--log-format json``) or readable text.

Call sites pass their structured fields as ``extra={"fields": {...}}``; the JSON
formatter puts them at the top level of the line, the text formatter appends
them as ``key=value``. Callers never pass a credential or the management key:
fields name who (a client id, a peer address) and what, never a secret.

Both formats escape control characters wherever a line quotes its caller (the JSON
encoder in every value, :func:`printable` in the text format's message): a request
path decoded from ``%0A`` or ``%1B[31m`` can neither forge a line nor drive a terminal.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from typing import Any

import msgspec

from matchmaker.observe.quiet import quiet_third_party_loggers

__all__ = ["JsonFormatter", "TextFormatter", "configure_logging", "fields", "printable"]

_ENCODER = msgspec.json.Encoder()
# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """``text`` on one line with its control characters escaped (``\\n``, ``\\x1b``, ...)."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def fields(**values: Any) -> dict[str, Any]:
    """The ``extra`` of a structured line: ``log.info("...", extra=fields(client=...))``."""
    return {"fields": values}


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", ...fields}``, with ``exception`` on errors."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(getattr(record, "fields", {}))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return _ENCODER.encode(line).decode()


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message key=value ...``."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        """The line's head with the message escaped; the record itself is left as it was
        (another handler may format it too). A traceback, appended after it, keeps its
        lines."""
        message = record.message
        record.message = printable(message)
        try:
            return super().formatMessage(record)
        finally:
            record.message = message

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        extra: dict[str, Any] = getattr(record, "fields", {})
        if not extra:
            return text
        head, newline, rest = text.partition("\n")
        # JSON escapes C0 controls only: C1 and the line separators are escaped here.
        pairs = printable(
            " ".join(f"{key}={_ENCODER.encode(value).decode()}" for key, value in extra.items())
        )
        return f"{head} {pairs}{newline}{rest}"


def configure_logging(level: str, log_format: str) -> None:
    """Send log lines from ``level`` up to stderr in ``log_format`` (the process's choice).

    Like :func:`logging.basicConfig`, this does nothing when the root logger already has
    handlers: a program embedding the server (or a test runner) keeps its own logging.
    Libraries that log payloads are held at warning whatever ``level`` says
    (:mod:`matchmaker.observe.quiet`): no secret reaches a line through them.
    """
    quiet_third_party_loggers()
    if log_format == "auto":
        log_format = "text" if sys.stderr.isatty() else "json"
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler])
