"""Our own CPU per relayed message, without any server: what the data plane adds to a frame.

    python tools/bench/matchmaker/hotpath.py [--number 200000] [--runs 5]

Two clients join one session in a real :class:`DataPlane` (no sockets: a
:class:`WriterConnection` whose ``send`` is never awaited, since the writer task is
not started); then one ``session.send`` frame is handed to ``on_frame`` again
and again. The same again through :class:`DirectConnection` (picows's path), whose
peer keeps the last frame written instead of a socket. Each step of that path is timed
on its own too (decode, the core, the event's frame, queueing it). Last, one
message each way in turn, unnumbered, then numbered (``seq``, so every event carries an
``ack``).
Prints the best of ``--runs`` in microseconds per call; docs/benchmarks/matchmaker-picows.md
sets it against each server's CPU per relayed message.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import timeit
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from matchmaker.config import Limits, ServerConfig
from matchmaker.data.direct import DirectConnection
from matchmaker.data.plane import DataPlane
from matchmaker.data.protocol.requests import REQUEST_DECODER, SessionSend
from matchmaker.data.translate import event_head
from matchmaker.data.writer import WriterConnection
from matchmaker.directory import ProjectDirectory

UNLIMITED = Limits(send_rate_per_s=1e12, send_burst=10**12, outbound_queue=10**9)
HELLO = '{"id":"h","type":"hello","data":{"v":1,"project":"bench"}}'
JOIN = '{"id":"j","type":"session.join","data":{"session":"r0","create":true}}'


class _Peer:
    """A socket that keeps the last frame written (``SocketPeer``)."""

    last = ""

    def send(self, text: str) -> None:
        self.last = text

    def close(self, code: int, reason: str) -> None:
        raise AssertionError("nothing closes here")


async def _unused_send(message: MutableMapping[str, Any]) -> None:
    raise AssertionError("the writer is not started here")


def _numbered(frame: str, count: int) -> Iterator[str]:
    """``frame`` numbered 1 to ``count``."""
    head = '{"type":"session.send",'
    return iter([frame.replace(head, f'{head}"seq":{seq},') for seq in range(1, count + 1)])


async def measure(number: int, runs: int) -> dict[str, float]:
    plane = DataPlane(ServerConfig(limits=UNLIMITED), ProjectDirectory(), asyncio.Event())
    sender, receiver = (
        WriterConnection(plane, plane.conversation(), _unused_send) for _ in range(2)
    )
    for connection in (sender, receiver):
        connection.on_frame(HELLO)
        connection.on_frame(JOIN)
    session_id = json.loads(receiver._queue[-1])["data"]["session_id"]
    frame = f'{{"type":"session.send","data":{{"session_id":"{session_id}","data":12345.678}}}}'
    request = REQUEST_DECODER.decode(frame)
    assert isinstance(request, SessionSend)
    data = request.data
    effects = sender.conversation.relay_message(
        session_id, None, data.data, None, time.time_ns() // 1_000_000
    )
    recipients, event = effects[0]
    outbound = receiver._queue
    peer = _Peer()
    direct = DirectConnection(plane, plane.conversation(), _Peer())
    direct_receiver = DirectConnection(plane, plane.conversation(), peer)
    for connection in (direct, direct_receiver):
        connection.on_frame(HELLO)
        connection.on_frame(JOIN.replace('"r0"', '"r1"'))
    direct_session = json.loads(peer.last)["data"]["session_id"]
    direct_frame = frame.replace(session_id, direct_session)
    # One message each way in turn, unnumbered and numbered (issue 42, exactly once: every
    # one is taken and the event it causes carries the other side's ack). Prebuilt, as each
    # seq is new, and the unnumbered ones alike (as many strings, in memory as they are), so
    # the two differ by seq and ack alone.
    count = number * runs + 1
    plain, plain_back = (iter([f"{frame} "[:-1] for _ in range(count)]) for _ in range(2))
    numbered, back = (_numbered(frame, count) for _ in range(2))
    inbound = sender._queue
    cases: dict[str, Callable[[], object]] = {
        "on_frame: the whole path (frame in, frame queued)": lambda: (
            sender.on_frame(frame),
            outbound.clear(),
        ),
        "on_frame through DirectConnection (picows: frame in, frame written)": lambda: (
            direct.on_frame(direct_frame)
        ),
        "decode (msgspec, to the request Struct)": lambda: REQUEST_DECODER.decode(frame),
        "core: Conversation.relay_message (rate limit, relay)": lambda: (
            sender.conversation.relay_message(
                session_id, None, data.data, None, time.time_ns() // 1_000_000
            )
        ),
        "encode the event once (event_head)": lambda: event_head(event),
        "deliver: encode, seq, replay buffer, metrics, queue": lambda: (
            plane.deliver_one(recipients, event, time.time_ns() // 1_000_000),
            outbound.clear(),
        ),
        "the same by the shell's short path (relay_local, outside a cluster)": lambda: (
            plane.relay_local(recipients, event, time.time_ns() // 1_000_000),
            outbound.clear(),
        ),
        "on_frame, one each way (two messages)": lambda: (
            sender.on_frame(next(plain)),
            receiver.on_frame(next(plain_back)),
            outbound.clear(),
            inbound.clear(),
        ),
        "the same numbered (seq; each event carries an ack)": lambda: (
            sender.on_frame(next(numbered)),
            receiver.on_frame(next(back)),
            outbound.clear(),
            inbound.clear(),
        ),
    }
    return {
        name: min(timeit.repeat(call, number=number, repeat=runs)) / number * 1e6
        for name, call in cases.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results = asyncio.run(measure(args.number, args.runs))
    print("| step | µs per message |")
    print("|---|---|")
    for name, micros in results.items():
        print(f"| {name} | {micros:.2f} |")


if __name__ == "__main__":
    main()
