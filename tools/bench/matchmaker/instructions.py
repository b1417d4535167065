"""CPU instructions per relayed message, counted by valgrind: a cost a loaded machine's noise
cannot blur (wall-clock medians of ``hotpath.py`` swing by 2x there on untouched steps).

    python tools/bench/matchmaker/instructions.py [--number 50000]

Runs itself under ``valgrind --tool=callgrind`` twice, relaying 0 and then ``--number``
``session.send`` frames through :class:`DirectConnection` (picows's path) to one
recipient whose replay buffer is already past its byte bound, and prints the difference
per message. Compare two checkouts by running it with each on ``PYTHONPATH``.
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


async def relay(number: int) -> None:
    plane = DataPlane(ServerConfig(limits=UNLIMITED), ProjectDirectory(), asyncio.Event())
    peer = _Peer()
    sender = DirectConnection(plane, plane._conversation(), _Peer())
    receiver = DirectConnection(plane, plane._conversation(), peer)
    for connection in (sender, receiver):
        connection.on_frame(HELLO)
        connection.on_frame(JOIN)
    session_id = json.loads(peer.last)["data"]["session_id"]
    frame = f'{{"type":"session.send","data":{{"session_id":"{session_id}","data":12345.678}}}}'
    for _ in range(WARM_UP + number):
        sender.on_frame(frame)


def instructions(number: int) -> int:
    with tempfile.NamedTemporaryFile() as out:
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}"]
        command += [sys.executable, __file__, "--relay", str(number)]
        result = subprocess.run(command, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", result.stderr)
    assert found is not None, result.stderr
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=50_000)
    parser.add_argument("--relay", type=int, help=argparse.SUPPRESS)  # the run under valgrind
    args = parser.parse_args()
    if args.relay is not None:
        asyncio.run(relay(args.relay))
        return
    per_message = (instructions(args.number) - instructions(0)) / args.number
    print(f"{per_message:,.0f} instructions per relayed message (one recipient)")


if __name__ == "__main__":
    main()
