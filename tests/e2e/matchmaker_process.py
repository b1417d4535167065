"""Start the installed ``matchmaker`` executable and find the ports it bound."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

from tests.matchmaker.polling import wait_until

LISTENING = re.compile(
    r"(?P<plane>data|control) plane listening on http://(?P<host>[^:]+):(?P<port>\d+)"
)


def executable() -> str:
    script = shutil.which("matchmaker", path=str(Path(sys.executable).parent))
    assert script is not None, "the matchmaker console script is not installed"
    return script


def run_to_completion(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``matchmaker args`` that is expected to exit by itself (bounded in time)."""
    return subprocess.run(
        [executable(), *args], cwd=cwd, capture_output=True, text=True, timeout=20, check=False
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class MatchmakerProcess:
    """One ``matchmaker`` process; stderr goes to ``log_path`` so tests can read it.

    A stopped process keeps its ports answering for its whole shutdown grace, so unless
    ``args`` name one the grace is 1 s (not 5): the tests' stops stay quick.
    """

    def __init__(
        self,
        args: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        expect_control: bool = True,
    ) -> None:
        self.log_path = cwd / f"matchmaker-{time.monotonic_ns()}.log"
        self._log = self.log_path.open("wb")
        clean_env = {k: v for k, v in os.environ.items() if not k.startswith("MATCHMAKER_")}
        clean_env.pop("REALTIME_MGMT_KEY", None)
        if "--shutdown-grace" not in args:
            args = ["--shutdown-grace", "1", *args]
        self.process = subprocess.Popen(
            [executable(), "--host", "127.0.0.1", *args],
            cwd=cwd,
            env={**clean_env, **(env or {})},
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.ports = self._wait_for_ports(2 if expect_control else 1)

    @property
    def data_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['data']}"

    @property
    def control_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['control']}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 10) -> int:
        """Send ``signum`` and return the exit status (killing after ``timeout``)."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
            raise
        finally:
            self._log.close()

    def _wait_for_ports(self, planes: int, timeout: float = 15) -> dict[str, int]:
        def reported() -> dict[str, int] | None:
            ports = {m["plane"]: int(m["port"]) for m in LISTENING.finditer(self.log())}
            if len(ports) == planes:
                return ports
            if self.process.poll() is not None:
                raise RuntimeError(f"matchmaker exited early:\n{self.log()}")
            return None

        try:
            return wait_until(reported, within_s=timeout, what="the listening ports")
        except AssertionError:
            self.process.kill()
            raise TimeoutError(f"matchmaker did not report its ports:\n{self.log()}") from None


@contextlib.contextmanager
def postgres_schema() -> Iterator[str]:
    """A PostgreSQL store URL in a fresh schema of database ``test``, dropped afterwards."""
    import asyncpg
    import pytest

    server = os.environ.get(
        "MATCHMAKER_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
    )
    schema = f"mm_e2e_{uuid.uuid4().hex[:12]}"

    async def execute(sql: str) -> None:
        conn = await asyncpg.connect(server)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    try:
        asyncio.run(execute(f'CREATE SCHEMA "{schema}"'))
    except OSError as exc:
        pytest.skip(f"PostgreSQL is not reachable at {server}: {exc}")
    try:
        yield f"{server}?search_path={schema}"
    finally:
        asyncio.run(execute(f'DROP SCHEMA "{schema}" CASCADE'))
