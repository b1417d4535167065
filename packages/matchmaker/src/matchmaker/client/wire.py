"""The client's side of the wire: decoding what arrives, encoding what leaves, the
server's error bodies as exceptions, and the credential to present at a ``hello``."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from matchmaker.errors import MatchmakerError

__all__ = ["CredentialSource", "Incoming", "decode", "encode", "error_from", "present"]

CredentialSource = Callable[[], str | Awaitable[str]]
"""A function (plain or async) returning the credential to present, called at every
``hello``: where a game fetches a fresh short-lived token."""


class Incoming(msgspec.Struct):
    """Any frame from the server: a reply, an event, ``ping``/``pong``; ``ack`` is the
    highest numbered send the server has taken (``docs/protocol.md``, acknowledgements)."""

    type: str
    id: str | None = None
    ok: bool = True
    data: Any = None
    error: Any = None
    seq: int | None = None
    ack: int | None = None


decode = msgspec.json.Decoder(Incoming).decode
_encoder = msgspec.json.Encoder()


def encode(message: dict[str, Any]) -> str:
    """A frame as the text the socket sends (its length in bytes is what caps count)."""
    return _encoder.encode(message).decode()


def error_from(body: Any) -> MatchmakerError:
    """The server's error body as the exception a request raises."""
    body = body if isinstance(body, dict) else {}
    return MatchmakerError(
        str(body.get("message", "error")),
        code=str(body.get("code", "server.internal")),
        details=body.get("details"),
    )


async def present(source: str | CredentialSource | None) -> str | None:
    """The credential to present now: ``source`` itself, or what calling it returns."""
    if source is None or isinstance(source, str):
        return source
    try:
        value = source()
        credential = await value if inspect.isawaitable(value) else value
    except Exception as error:
        raise MatchmakerError(
            f"the credential function failed: {type(error).__name__}: {error}",
            code="client.credential",
        ) from error
    if not isinstance(credential, str):
        raise MatchmakerError(
            f"the credential function returned {type(credential).__name__}, not a string",
            code="client.credential",
        )
    return credential
