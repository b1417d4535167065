"""Errors the matchmaker raises, and the catalogue of every code it may carry.

::

    mtcommon.CodedError
     └── MatchmakerError           code chosen per raise, from CATALOGUE

Every error that reaches a client carries a stable dotted code; the HTTP and
WebSocket layers render it as ``{"error": {"code", "message", "details"?}}``,
the ``matchmaker`` command as ``error: <message> [<code>]`` (``mtcommon.render_line``,
as tasktool does) with exit status 1, or 2 for ``usage``.

:data:`CATALOGUE` is the one definition of each code: where it is reported
and, for HTTP, with which status. ``docs/protocol.md`` and
``docs/control-plane.md`` give each one's meaning; a test keeps the code, the
catalogue and the docs in step (a code raised but not catalogued or not
documented, or catalogued but never raised, fails it).
"""

from __future__ import annotations

from mtcommon import Catalogue, CodedError, ErrorCode

__all__ = ["CATALOGUE", "STATUS_BY_CODE", "Code", "MatchmakerError", "internal_error"]


class MatchmakerError(CodedError):
    """An error with a stable code that the control or data plane reports to its caller."""

    code = "server.internal"


def internal_error() -> MatchmakerError:
    """What a caller is told when the server failed (a bug, logged with its traceback
    where it happened): ``server.internal``, with nothing of the failure in it."""
    return MatchmakerError("internal error", code="server.internal")


def Code(
    *,
    data: bool = False,
    http: int | None = None,
    exit: int | None = None,
    client: bool = False,
    admin: bool = False,
    simulate: bool = False,
) -> ErrorCode:
    """One entry of the table below (named as the entry it builds): where an error code
    is reported, each surface documented in its own table. ``data``: an error reply on
    the data plane (``docs/protocol.md``, Error codes); ``http``: the status of a
    control-plane (or data-port HTTP) response (``docs/control-plane.md``, Errors);
    ``exit``: the status of the ``matchmaker`` command that stops with it, 1 for a
    setting that cannot work, 2 for a malformed command line (``docs/control-plane.md``,
    Startup errors); ``client``: raised by the Python client :mod:`matchmaker.client`
    (``docs/protocol.md``, Client library errors); ``admin``: reported by ``matchmaker
    admin`` itself, exit status 1 (``docs/operations.md``, Admin CLI errors);
    ``simulate``: reported by ``matchmaker simulate``, exit status 1 (``docs/modes.md``,
    Simulator errors)."""
    named = {"data": data, "client": client, "admin": admin, "simulate": simulate}
    surfaces = frozenset(surface for surface, reported in named.items() if reported)
    return ErrorCode(exit=exit, http=http, surfaces=surfaces)


_CODES: dict[str, ErrorCode] = {
    # -- the data plane: error replies to requests ------------------------------------------
    "protocol.bad_request": Code(data=True),
    "protocol.unknown_type": Code(data=True),
    "protocol.too_large": Code(data=True),
    "protocol.not_ready": Code(data=True),
    "auth.invalid_credential": Code(data=True),
    "project.forbidden": Code(data=True),
    "project.not_found": Code(data=True, http=404),
    "project.lockdown": Code(data=True),
    "pool.policy_not_found": Code(data=True),
    "pool.policy_required": Code(data=True),
    "pool.conflict": Code(data=True),
    "pool.not_found": Code(data=True),
    "pool.filter_mismatch": Code(data=True),
    "pool.attribute_missing": Code(data=True),
    "pool.latencies_required": Code(data=True),
    "pool.already_entered": Code(data=True),
    "pool.limit": Code(data=True),
    "pool.wrong_mode": Code(data=True),
    "claim.invalid": Code(data=True),
    "claim.conflict": Code(data=True),
    "claim.bad_cursor": Code(data=True),
    "pick.invalid": Code(data=True),
    "pick.not_found": Code(data=True),
    "pick.limit": Code(data=True),
    "proposal.invalid": Code(data=True),
    "proposal.unavailable": Code(data=True),
    "proposal.limit": Code(data=True),
    "proposal.not_found": Code(data=True),
    "party.not_found": Code(data=True),
    "party.not_leader": Code(data=True),
    "party.too_large": Code(data=True),
    "party.full": Code(data=True),
    "party.limit": Code(data=True),
    "party.unsupported": Code(data=True),
    "delegate.not_attached": Code(data=True),
    # per group in a delegate.form reply, not as an error reply
    "delegate.invalid_group": Code(data=True),
    "delegate.stale": Code(data=True),
    "rtc.unavailable": Code(data=True),
    "rtc.bad_offer": Code(data=True),
    "rtc.limit": Code(data=True),
    "session.not_found": Code(data=True),
    "session.not_member": Code(data=True),
    "session.full": Code(data=True),
    "session.limit": Code(data=True),
    "backfill.invalid": Code(data=True),
    "backfill.unsupported": Code(data=True),
    "rate.limited": Code(data=True),
    "resume.expired": Code(data=True),
    "cluster.unavailable": Code(data=True, http=503, exit=1),
    "server.internal": Code(data=True, http=500),
    # -- HTTP: the control plane, and the data port's /healthz and 404s ----------------------
    "request.malformed_json": Code(http=400),
    "request.invalid": Code(http=400),
    "request.duplicate_key": Code(http=400),
    "project.reserved_id": Code(http=400),
    "auth.unauthorized": Code(http=401),
    "route.not_found": Code(http=404),
    "method.not_allowed": Code(http=405),
    "project.exists": Code(http=409),
    "project.secret_in_use": Code(http=409),
    "project.conflict": Code(http=412),
    "request.too_large": Code(http=413),
    "request.timeout": Code(http=408),
    "request.aborted": Code(http=400),
    "project.limit": Code(http=400),
    "server.shutting_down": Code(http=503),
    "request.unsupported_media_type": Code(http=415),
    "store.corrupt": Code(http=500, exit=1),
    "store.unavailable": Code(http=503, exit=1),
    "store.key_mismatch": Code(http=500, exit=1),
    # -- startup: the matchmaker command exits ---------------------------------------------
    "store.bad_url": Code(exit=1),
    "store.missing_extra": Code(exit=1),
    "store.bad_key": Code(exit=1),
    "store.key_file_mode": Code(exit=1),
    "server.bind_failed": Code(exit=1),
    "usage": Code(exit=2),
    "server.unavailable": Code(exit=1),
    "server.unknown": Code(exit=1),
    "config.unknown_key": Code(exit=2),
    "config.invalid": Code(exit=2),
    "config.unreadable": Code(exit=2),
    # -- the Python client -------------------------------------------------------------------
    "client.connect": Code(client=True),
    "client.closed": Code(client=True),
    "client.credential": Code(client=True),
    "client.interrupted": Code(client=True),
    "client.backpressure": Code(client=True),
    # -- matchmaker admin: the command line's own failures -----------------------------------
    "admin.unreachable": Code(admin=True),
    "admin.bad_response": Code(admin=True),
    "admin.invalid_file": Code(admin=True),
    # -- matchmaker simulate: its inputs ------------------------------------------------------
    "simulate.unreadable": Code(simulate=True),
    "simulate.bad_arrival": Code(simulate=True),
    "simulate.out_of_order": Code(simulate=True),
    "simulate.unsupported": Code(simulate=True),
}

CATALOGUE = Catalogue(_CODES)

STATUS_BY_CODE: dict[str, int] = {
    code: spec.http for code, spec in CATALOGUE.items() if spec.http is not None
}
"""The HTTP status of each code an HTTP response may carry; anything else is a 500."""
