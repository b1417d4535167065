"""The simulator's files: a policy (JSON or YAML), an arrivals trace, an output written whole."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from matchmaker.arrivals import Trace, parse_arrivals
from matchmaker.config import Limits
from matchmaker.control.validation import decode_policy
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy
from mtcommon import load_safe

__all__ = ["read_policy", "read_trace", "write_whole"]


def read_policy(path: str, limits: Limits) -> MatchmakingPolicy:
    """The policy object in ``path``, checked as ``/admin`` checks a Project's policies
    (the same coded errors: ``request.invalid`` with the field, ``request.malformed_json``).
    A file that does not start with ``{`` is read as YAML first."""
    data = _read(path)
    if not data.lstrip().startswith(b"{"):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _unreadable(path, exc) from None
        data = msgspec.json.encode(load_safe(text, source=path))
    return decode_policy(data, limits)


def read_trace(path: str, *, pool: str | None = None) -> Trace:
    """The arrivals of ``path``, read whole and checked before any policy runs."""
    return parse_arrivals(_read(path), pool=pool)


def write_whole(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a reader sees the old file or the new one."""
    target = Path(path)
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        try:
            temp.write_text(text, encoding="utf-8")
            os.replace(temp, target)
        finally:
            temp.unlink(missing_ok=True)
    except OSError as exc:
        raise _unreadable(path, exc, verb="write") from None


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise _unreadable(path, exc) from None


def _unreadable(path: str, exc: Exception, verb: str = "read") -> MatchmakerError:
    return MatchmakerError(
        f"cannot {verb} {path}: {exc}", code="simulate.unreadable", details={"file": path}
    )
