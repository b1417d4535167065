"""Opening a WebSocket to the data plane and building the ``hello`` to send on it: what a
first connection and every reconnect of a client do alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException

from matchmaker.client.wire import CredentialSource, present
from matchmaker.errors import MatchmakerError

__all__ = ["Attributes", "Dial", "hello_data", "open_socket"]

Attributes = dict[str, str | int | float | bool]


async def open_socket(url: str, open_timeout: float) -> ClientConnection:
    """A WebSocket to ``url``, or ``client.connect`` (refused, unreachable, too slow)."""
    try:
        return await connect(
            url, compression=None, open_timeout=open_timeout, max_size=None, ping_interval=None
        )
    except (OSError, WebSocketException, TimeoutError) as error:
        raise MatchmakerError(f"cannot connect to {url}: {error}", code="client.connect") from error


async def hello_data(
    project: str | None,
    credential: str | CredentialSource | None,
    attributes: Attributes | None,
    resume: tuple[str, int] | None,
) -> dict[str, Any]:
    """The ``hello`` data; a credential function is called now, for a fresh credential."""
    data: dict[str, Any] = {"v": 1}
    if project is not None:
        data["project"] = project
    presented = await present(credential)
    if presented is not None:
        data["credential"] = presented
    if attributes:
        data["attributes"] = attributes
    if resume is not None:
        data["resume"] = {"token": resume[0], "last_seq": resume[1]}
    return data


@dataclass(frozen=True, slots=True)
class Dial:
    """Where and as whom a client connects: kept to reconnect the same way."""

    url: str
    project: str | None
    credential: str | CredentialSource | None
    attributes: Attributes | None
    open_timeout: float
