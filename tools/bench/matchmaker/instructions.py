"""CPU instructions per relayed message, counted by valgrind: a cost a loaded machine's noise
cannot blur (wall-clock medians of ``hotpath.py`` swing by 2x there on untouched steps).

    python tools/bench/matchmaker/instructions.py [--number 50000] [--both-ways [--numbered]]

Runs itself under ``valgrind --tool=callgrind`` twice, relaying 0 and then ``--number``
``session.send`` frames through :class:`DirectConnection` (picows's path) to one
recipient whose replay buffer is already past its byte bound, and prints the difference
per message. Compare two checkouts by running it with each on ``PYTHONPATH``.
``--both-ways``: the recipient sends one back after each; ``--numbered``: every send
carries the next ``seq`` of its client (exactly once), so every event carries an
``ack``. Each frame is then built in the loop, numbered or not, alike but for the seq.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile

from hotpath import HELLO, JOIN, UNLIMITED, _Peer

from matchmaker.config import ServerConfig
from matchmaker.data.direct import DirectConnection
from matchmaker.data.plane import DataPlane
from matchmaker.directory import ProjectDirectory

WARM_UP = 3000  # relayed first: the receiver's replay buffer is full, as in a long game


SEND = '{"type":"session.send",'


def _sent(frame: str, seq: int | None) -> str:
    """``frame`` numbered ``seq``, or rebuilt as is (the same work but for the number)."""
    return frame.replace(SEND, SEND if seq is None else f'{SEND}"seq":{seq},')


async def relay(number: int, *, both_ways: bool = False, numbered: bool = False) -> None:
    plane = DataPlane(ServerConfig(limits=UNLIMITED), ProjectDirectory(), asyncio.Event())
    peer = _Peer()
    sender = DirectConnection(plane, plane.conversation(), _Peer())
    receiver = DirectConnection(plane, plane.conversation(), peer)
    for connection in (sender, receiver):
        connection.on_frame(HELLO)
        connection.on_frame(JOIN)
    session_id = json.loads(peer.last)["data"]["session_id"]
    frame = f'{{"type":"session.send","data":{{"session_id":"{session_id}","data":12345.678}}}}'
    if not both_ways:
        for _ in range(WARM_UP + number):
            sender.on_frame(frame)
        return
    for seq in range(1, WARM_UP + number + 1):
        sender.on_frame(_sent(frame, seq if numbered else None))
        receiver.on_frame(_sent(frame, seq if numbered else None))


def instructions(number: int, flags: list[str]) -> int:
    with tempfile.NamedTemporaryFile() as out:
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}"]
        command += [sys.executable, __file__, "--relay", str(number), *flags]
        result = subprocess.run(command, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", result.stderr)
    assert found is not None, result.stderr
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=50_000)
    parser.add_argument("--both-ways", action="store_true")
    parser.add_argument("--numbered", action="store_true")
    parser.add_argument("--relay", type=int, help=argparse.SUPPRESS)  # the run under valgrind
    args = parser.parse_args()
    if args.relay is not None:
        asyncio.run(relay(args.relay, both_ways=args.both_ways, numbered=args.numbered))
        return
    flags = [f for f, on in (("--both-ways", args.both_ways), ("--numbered", args.numbered)) if on]
    messages = args.number * (2 if args.both_ways else 1)
    per_message = (instructions(args.number, flags) - instructions(0, flags)) / messages
    print(f"{per_message:,.0f} instructions per relayed message (one recipient)")


if __name__ == "__main__":
    main()
