"""Idle memory per WebSocket under allocator settings and picows read buffers.

    python tools/bench/matchmaker/idle_memory.py [--clients 1000] [--runs 3] [--only picows]

Starts the real launcher (``server.py``, as ``compare.py`` does) once per row
with the row's environment, holds ``--clients`` clients past ``hello`` with the
Node load client and reports (RSS held - RSS of the fresh server) / clients,
the median of ``--runs``. (Rows for granian, the server before picows, and its
jemalloc settings are in docs/benchmarks/matchmaker-granian.md.) Prints a Markdown table for
docs/benchmarks/matchmaker-picows.md.
"""

from __future__ import annotations

import argparse
import os
import statistics

from compare import client, start
from server import READ_BUFFER

ROWS: list[tuple[str, str, dict[str, str]]] = [
    ("hypercorn", "defaults", {}),
    # picows's first read buffer per socket: its default, ours (the launcher's), smaller.
    ("picows", "`read_buffer_init_size` 16384 (picows's default)", {READ_BUFFER: "16384"}),
    ("picows", "`read_buffer_init_size` 4096 (the launcher's)", {}),
    ("picows", "`read_buffer_init_size` 1024", {READ_BUFFER: "1024"}),
]


def kib_per_connection(server: str, env: dict[str, str], clients: int) -> float:
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)  # the server process inherits it
    try:
        target = start(server)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    try:
        baseline = target.rss_bytes()
        held = client(target, "mm", "hold", "--clients", str(clients))
        return float((held["server_rss_bytes"] - baseline) / held["connected"] / 1024)
    finally:
        target.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", help="only the rows of this server")
    args = parser.parse_args()
    print("| server | setting | KiB per idle connection |")
    print("|---|---|---|")
    for server, label, env in ROWS:
        if args.only and server != args.only:
            continue
        values = [kib_per_connection(server, env, args.clients) for _ in range(args.runs)]
        print(f"| {server} | {label} | {statistics.median(values):.1f} |", flush=True)


if __name__ == "__main__":
    main()
