"""Structured logs of a real ``matchmaker`` process: JSON lines, and never a secret."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx
import pytest

from matchmaker.client import Client
from matchmaker.errors import MatchmakerError
from matchmaker.observe.logs import JsonFormatter, TextFormatter

KEY = "mgmt-key-that-must-never-be-logged-7f3a"
SECRET = "client-secret-that-must-never-be-logged-91c2"
WRONG_KEY = "a-wrong-management-key-also-unlogged-55d0"
WRONG_SECRET = "a-wrong-credential-also-unlogged-0b7e"
URL = re.compile(r"http://[\d.]+:\d+")


@dataclass
class Process:
    """A ``matchmaker`` process and every stderr line it wrote so far."""

    proc: asyncio.subprocess.Process
    lines: list[str] = field(default_factory=list)

    async def line_containing(self, text: str) -> str:
        async with asyncio.timeout(20):
            while True:
                raw = await self.proc.stderr.readline()  # type: ignore[union-attr]
                assert raw, f"the process exited before logging {text!r}: {self.lines}"
                line = raw.decode()
                self.lines.append(line)
                if text in line:
                    return line

    async def stop(self) -> list[str]:
        self.proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(20):
            rest = await self.proc.stderr.read()  # type: ignore[union-attr]
            await self.proc.wait()
        self.lines.extend(rest.decode().splitlines(keepends=True))
        return self.lines


@pytest.fixture
async def process() -> AsyncIterator[Process]:
    env = {**os.environ, "REALTIME_MGMT_KEY": KEY}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "matchmaker", "--host", "127.0.0.1", "--port", "0"),
        *("--management-port", "0", "--store", "memory://", "--server", "hypercorn"),
        *("--log-format", "json", "--log-level", "debug"),
        env=env,
        stderr=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
    )
    running = Process(proc)
    try:
        yield running
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_json_lines_with_lifecycle_and_writes_and_no_secret(process: Process) -> None:
    data_line = await process.line_containing("data plane listening")
    control_line = await process.line_containing("control plane listening")
    data_url = URL.findall(json.loads(data_line)["message"])[0]
    admin_url = URL.findall(json.loads(control_line)["message"])[0]
    ws = data_url.replace("http", "ws") + "/ws"

    async with httpx.AsyncClient(base_url=admin_url) as http:
        auth = {"Authorization": f"Bearer {KEY}"}
        project = {
            "id": "vault",
            "keys": [{"type": "shared-secret", "secret": SECRET}],
            "policies": [{"name": "duel", "mode": "auto", "groupSize": 2, "default": True}],
        }
        assert (await http.post("/admin/projects", json=project, headers=auth)).status_code == 201
        wrong = {"Authorization": f"Bearer {WRONG_KEY}"}
        assert (await http.get("/admin/projects", headers=wrong)).status_code == 401
        patch = {"keys": [{"type": "shared-secret", "secret": SECRET}], "lockdown": True}
        response = await http.patch("/admin/projects/vault", json=patch, headers=auth)
        assert response.status_code == 200

    async with (
        await Client.connect(ws, credential=SECRET, attributes={"tier": "gold"}) as alice,
        await Client.connect(ws, credential=SECRET) as bob,
    ):
        await alice.enter()
        await bob.enter()
        session = (await alice.next_event("session.created")).data["session_id"]
        await alice.send(session, {"secret-ish": SECRET})
        await bob.next_event("session.message")
    with pytest.raises(MatchmakerError) as refused:
        await Client.connect(ws, credential=WRONG_SECRET)
    assert refused.value.code == "auth.invalid_credential"
    await process.line_containing('"code":4003')  # the refused connection's close is logged

    lines = await process.stop()
    records = [json.loads(line) for line in lines if line.strip()]  # every line is JSON
    assert all({"time", "level", "logger", "message"} <= record.keys() for record in records)
    text = "".join(lines)
    for secret in (KEY, SECRET, WRONG_KEY, WRONG_SECRET):
        assert secret not in text
    events = [record.get("event") for record in records]
    assert events.count("hello") == 2
    assert events.count("close") >= 3
    hello = next(record for record in records if record.get("event") == "hello")
    assert hello["project"] == "vault"
    assert hello["client"].startswith("c")
    writes = [(r["method"], r["path"], r["status"]) for r in records if r.get("event") == "control"]
    assert ("POST", "/admin/projects", 201) in writes
    assert ("PATCH", "/admin/projects/vault", 200) in writes
    assert ("GET", "/admin/projects", 401) in writes  # refusals are logged too
    assert any(record["level"] == "debug" for record in records)


def test_text_lines_append_the_fields_and_json_lines_hold_them() -> None:
    record = logging.LogRecord("matchmaker.data", logging.INFO, __file__, 1, "closed", (), None)
    record.fields = {"client": "c1-2", "code": 4000, "reason": "bye"}
    text = TextFormatter().format(record)
    assert text.endswith(' INFO matchmaker.data: closed client="c1-2" code=4000 reason="bye"')
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "closed"
    assert (line["client"], line["code"], line["reason"]) == ("c1-2", 4000, "bye")
    assert line["time"].endswith("Z")


@pytest.mark.parametrize(
    "path",
    [
        "/admin/x -> 401\n2026-11-27 08:00:00,000 INFO matchmaker.control: control DELETE "
        "/admin/projects/vault -> 204",
        "/admin/\x1b[31mred\x1b[0m",
        "/admin/\r\u2028\x00\x9b",
    ],
    ids=["newline-forges-a-line", "terminal-escape", "other-controls"],
)
def test_a_text_line_escapes_control_characters_in_its_message(path: str) -> None:
    """The control plane's access line quotes a path decoded from ``%0A``/``%1B``: one
    line, no control character, whatever it holds (as the key=value fields already are)."""
    record = logging.LogRecord(
        "matchmaker.control",
        logging.INFO,
        __file__,
        1,
        "control %s %s -> %d",
        ("GET", path, 401),
        None,
    )
    record.fields = {"path": path}
    text = TextFormatter().format(record)
    assert "\n" not in text
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c == "\u2028" for c in text)
    assert "\\x1b[31m" in text or "\\n2026" in text or "\\r\\u2028\\x00\\x9b" in text
    assert record.getMessage().count(path) == 1  # the record is left as it was
