"""A small asyncio client for the data plane, over the ``websockets`` library.

::

    async with await Client.connect("ws://127.0.0.1:8080/ws", project="demo") as client:
        await client.enter(policy="duel")
        created = await client.next_event("session.created")
        await client.send(created.data["session_id"], {"move": "e4"})

Replies that carry an error raise :class:`~matchmaker.errors.MatchmakerError`
with the server's code; events (pushes) are read with :meth:`Client.next_event`
or ``async for event in client.events()``.

A ``credential`` is a string or a :data:`CredentialSource`, a function called at every
``hello`` for the credential to present: a game with short-lived tokens hands over a
fresh one each time it (re)connects.

``reconnect=True`` (or a :class:`Reconnect`) makes the client resume unclean drops by
itself, with backoff, deduplicated replays and exactly-once sends (``docs/library.md``).
"""

from matchmaker.client.backoff import Reconnect
from matchmaker.client.client import Client, ClientState, Event
from matchmaker.client.wire import CredentialSource

__all__ = ["Client", "ClientState", "CredentialSource", "Event", "Reconnect"]
