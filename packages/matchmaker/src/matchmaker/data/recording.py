"""``--record-arrivals``: each ``pool.enter`` of a declared policy, as a line of an arrivals
file ``matchmaker simulate`` replays (:mod:`matchmaker.arrivals`).

A line holds when the entry was made (the server's wall clock, epoch ms), the
policy's name and the attributes that policy's filter reads — nothing else:
no credential, player id, client id, ``public`` profile or attribute the
rules do not read, so the file is free of personal data by construction (an
attribute a policy filters on, such as a rating, is kept: it is what is
being tuned). The file grows by appending whole lines; past ``max_bytes`` it
is renamed ``FILE.1`` (replacing the one before) and a new ``FILE`` begins,
so at most twice ``max_bytes`` is kept.
"""

from __future__ import annotations

import logging
import os
import time
from typing import IO

from matchmaker.arrivals import Arrival, encode_arrival
from matchmaker.core.events import EnteredPool
from matchmaker.core.state import ClientState
from matchmaker.directory import ProjectDirectory
from matchmaker.model import FilterValue
from matchmaker.observe.logs import fields

__all__ = ["ArrivalRecorder"]

_log = logging.getLogger("matchmaker.data")


class ArrivalRecorder:
    """Appends arrivals lines to one file, rotated by size."""

    def __init__(self, path: str, max_bytes: int, directory: ProjectDirectory) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._directory = directory
        self._file: IO[bytes] | None = None
        self._size = 0
        self._failed = False

    def entered(self, client: ClientState, entered: EnteredPool) -> None:
        """``client`` entered a pool: a line if that is a declared policy's."""
        pool = entered.pool
        project = self._directory.get(client.project_id)
        policy = None if project is None else project.policy(pool)
        if policy is None:
            return  # an ad-hoc pool, or the policy was removed meanwhile
        read = [*(policy.filter or ()), *([policy.balance.attribute] if policy.balance else [])]
        attributes: dict[str, FilterValue] = {
            key: client.attributes[key] for key in read if key in client.attributes
        }
        latencies: dict[str, int | float] | None = None
        if entered.latencies is not None:
            latencies = dict(entered.latencies)
        now_ms = int(time.time() * 1000)
        arrival = Arrival(now_ms, attributes, latencies, pool=pool)
        self._write(encode_arrival(arrival) + b"\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, line: bytes) -> None:
        """Append ``line`` whole (one unbuffered write), rotating first when it would pass
        ``max_bytes``. A failing disk is logged once and recording stops: matching goes on."""
        if self._failed:
            return
        try:
            if self._file is None:
                self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115
                self._size = self._file.tell()
            if self._size and self._size + len(line) > self.max_bytes:
                self._file.close()
                os.replace(self.path, f"{self.path}.1")
                self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115
                self._size = 0
            self._file.write(line)
            self._size += len(line)
        except OSError as exc:
            self._failed = True
            self.close()
            _log.error("recording arrivals stopped: %s", exc, extra=fields(event="record_arrivals"))
