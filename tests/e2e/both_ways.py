"""Two players of the Python client (``reconnect=``) sending every 5 ms while something
happens to their connections (a restart, a drain): what each sent and received, so that a
test checks every message arrived exactly once and in order both ways."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from matchmaker.client import Client
from tests.matchmaker.polling import eventually

END = "end"  # the last message of each player: everything before it has arrived


@dataclass
class Player:
    """One client: how many messages it sent (numbered 0, 1, ...), the data of those it
    received in order, and the ``connection.*`` events it saw."""

    client: Client
    sent: int = 0
    got: list[Any] = field(default_factory=list)
    connection: list[str] = field(default_factory=list)

    def back(self, times: int) -> bool:
        """Whether it resumed ``times`` times and is open."""
        return self.connection.count("connection.back") >= times and self.client.state == "open"


async def _send(me: Player, session: str, stop: asyncio.Event) -> None:
    while not stop.is_set():
        await me.client.send(session, me.sent)
        me.sent += 1
        await asyncio.sleep(0.005)  # the pace of a game, not a synchronisation


async def _receive(me: Player, session: str, peer: str) -> None:
    while True:
        event = await me.client.next_event(wait_s=30)
        if event.type.startswith("connection."):
            me.connection.append(event.type)
        elif event.type == "session.message":
            assert event.data["session_id"] == session, event  # the same session throughout
            assert event.data["from"] == peer, event
            if event.data["data"] == END:
                return
            me.got.append(event.data["data"])


async def both_ways(
    players: tuple[Player, Player],
    session: str,
    disrupt: Callable[[], Awaitable[None]],
    *,
    around: int = 60,
) -> None:
    """Both send every 5 ms; once each received ``around`` messages, ``disrupt()`` (which
    returns when both are back); both send ``around`` more, then :data:`END`, and this
    returns when each received the other's :data:`END`."""
    alice, bob = players
    assert alice.client.client_id is not None
    assert bob.client.client_id is not None
    stop = asyncio.Event()
    async with asyncio.timeout(90):
        receiving = [
            asyncio.create_task(_receive(alice, session, bob.client.client_id)),
            asyncio.create_task(_receive(bob, session, alice.client.client_id)),
        ]
        sending = [asyncio.create_task(_send(me, session, stop)) for me in players]

        def progressed(marks: tuple[int, int], received: int) -> bool:
            """Each sent ``around`` more than ``marks`` and received ``received``."""
            for task in (*sending, *receiving):
                if task.done():
                    task.result()  # a send refused, an assertion: fail now
            sent = all(me.sent >= mark + around for me, mark in zip(players, marks, strict=True))
            return sent and all(len(me.got) >= received for me in players)

        await eventually(lambda: progressed((0, 0), around), within_s=30, what="before")
        await disrupt()
        marks = (alice.sent, bob.sent)
        await eventually(lambda: progressed(marks, 0), within_s=30, what="after")
        stop.set()
        await asyncio.gather(*sending)
        for me in players:
            await me.client.send(session, END)
        await asyncio.gather(*receiving)
