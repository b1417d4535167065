"""``async with store:`` closes a store however its block ends.

An SQLite store holds a worker thread (aiosqlite's, not a daemon): left open after an
exception, it keeps the process alive once ``asyncio.run`` has returned.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from matchmaker.store import open_store
from tests.matchmaker.polling import eventually

SCRIPT = """
import asyncio
import sys

import matchmaker


async def main() -> None:
    async with await matchmaker.open_store(sys.argv[1]) as store:
        await store.ping()
        raise RuntimeError("the caller's own failure")


asyncio.run(main())
"""


def test_a_sqlite_store_left_by_an_exception_lets_the_process_exit(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'projects.db'}"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, url],
        capture_output=True,
        text=True,
        timeout=60,  # without the close, the process would wait for the thread forever
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "the caller's own failure" in done.stderr


async def test_the_block_gets_the_store_and_its_worker_thread_ends(tmp_path: Path) -> None:
    before = _sqlite_workers()  # other tests' stores may be open in this process
    store = await open_store(f"sqlite:///{tmp_path / 'projects.db'}")
    own = _sqlite_workers() - before
    assert own  # the thread the first test's process would wait for
    async with store as entered:
        assert entered is store
        await store.ping()
    await eventually(lambda: not own & _sqlite_workers(), within_s=10, what="its thread ended")


def _sqlite_workers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if "_connection_worker_thread" in t.name}
