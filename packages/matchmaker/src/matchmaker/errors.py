"""Errors the matchmaker raises.

::

    mtcommon.CodedError
     └── MatchmakerError           code chosen per raise: project.*, pool.*, auth.*, ...

Every error that reaches a client carries a stable dotted code; the HTTP and
WebSocket layers render it as ``{"error": {"code", "message", "details"?}}``.
"""

from __future__ import annotations

from mtcommon import CodedError


class MatchmakerError(CodedError):
    """An error with a stable code that the control or data plane reports to its caller."""

    code = "server.internal"
