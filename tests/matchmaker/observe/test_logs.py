"""Structured logs of a real ``matchmaker`` process: JSON lines, and never a secret."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import jwt
import pytest

from matchmaker.client import Client
from matchmaker.errors import MatchmakerError
from matchmaker.observe.logs import JsonFormatter, TextFormatter
from tests.matchmaker.storekeys import new_key_file

KEY = "mgmt-key-that-must-never-be-logged-7f3a"
SECRET = "client-secret-that-must-never-be-logged-91c2"
WRONG_KEY = "a-wrong-management-key-also-unlogged-55d0"
WRONG_SECRET = "a-wrong-credential-also-unlogged-0b7e"
APPLIED_SECRET = "applied-client-secret-never-logged-3e8d"
JWT_SECRET = "an-hs256-jwt-key-that-must-never-be-logged-a41f"
JWT_KEY = {
    "type": "jwt",
    "algorithm": "HS256",
    "key": JWT_SECRET,
    "claims": {"tier": "attributes.tier"},
}
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


# Each store on each server; half of them with a store key (sealed bodies never pass
# through a logger in clear), half without (where a chatty library would show them).
STORES_AND_SERVERS = [
    pytest.param(store, server, sealed, marks=[pytest.mark.postgres] * (store == "postgresql"))
    for store, server, sealed in [
        ("sqlite", "hypercorn", False),
        ("sqlite", "picows", True),
        ("postgresql", "hypercorn", True),
        ("postgresql", "picows", False),
    ]
]


@dataclass
class Deployment:
    """Where a process under test keeps its Projects, and the key that seals them."""

    store_url: str
    key_file: Path | None
    env: dict[str, str]


@pytest.fixture
def deployment(
    request: pytest.FixtureRequest, tmp_path: Path, store: str, sealed: bool
) -> Deployment:
    if store == "sqlite":
        url = f"sqlite:///{tmp_path / 'projects.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    env = {**os.environ, "REALTIME_MGMT_KEY": KEY}
    if not sealed:
        return Deployment(url, None, env)
    key_file = new_key_file(tmp_path / "store.key")
    return Deployment(url, key_file, {**env, "MATCHMAKER_STORE_KEY_FILE": str(key_file)})


@pytest.fixture
async def process(deployment: Deployment, server: str) -> AsyncIterator[Process]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "matchmaker", "--host", "127.0.0.1", "--port", "0"),
        *("--management-port", "0", "--store", deployment.store_url, "--server", server),
        *("--log-format", "json", "--log-level", "debug"),
        env=deployment.env,
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


async def admin_command(env: dict[str, str], *args: str) -> str:
    """Run ``matchmaker admin ...``; everything it printed (it must succeed)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "matchmaker", "admin", *args),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    async with asyncio.timeout(60):
        out, _ = await proc.communicate()
    assert proc.returncode == 0, out.decode()
    return out.decode()


async def every_admin_operation(admin_url: str, deployment: Deployment, tmp_path: Path) -> str:
    """Create, read, list, patch, apply and delete (the wrong key too); what the CLI printed."""
    async with httpx.AsyncClient(base_url=admin_url) as http:
        auth = {"Authorization": f"Bearer {KEY}"}
        project = {
            "id": "vault",
            "keys": [{"type": "shared-secret", "secret": SECRET}, JWT_KEY],
            "policies": [{"name": "duel", "mode": "auto", "groupSize": 2, "default": True}],
        }
        assert (await http.post("/admin/projects", json=project, headers=auth)).status_code == 201
        wrong = {"Authorization": f"Bearer {WRONG_KEY}"}
        assert (await http.get("/admin/projects", headers=wrong)).status_code == 401
        read = await http.get("/admin/projects/vault", headers=auth)
        assert read.json()["keys"][0]["secret"] == SECRET
        assert (await http.get("/admin/projects", headers=auth)).status_code == 200
        patch = {"keys": [{"type": "shared-secret", "secret": SECRET}, JWT_KEY], "lockdown": True}
        response = await http.patch(
            "/admin/projects/vault", json=patch, headers={**auth, "If-Match": read.headers["ETag"]}
        )
        assert response.status_code == 200
        response = await http.patch("/admin/projects/vault", json={"lockdown": False}, headers=auth)
        assert response.status_code == 200
        plan = tmp_path / "apply.yaml"
        plan.write_text(
            "projects:\n"
            f"  - {{id: applied, keys: [{{type: shared-secret, secret: {APPLIED_SECRET}}}]}}\n"
            f"  - {json.dumps(project)}\n"
        )
        env = {**deployment.env, "MATCHMAKER_ADMIN_URL": admin_url}
        printed = await admin_command(env, "apply", "-f", str(plan))
        assert (await http.delete("/admin/projects/applied", headers=auth)).status_code == 204
    return printed


@pytest.mark.parametrize(("store", "server", "sealed"), STORES_AND_SERVERS)
async def test_json_lines_with_lifecycle_and_writes_and_no_secret(
    process: Process, deployment: Deployment, tmp_path: Path
) -> None:
    data_line = await process.line_containing("data plane listening")
    control_line = await process.line_containing("control plane listening")
    data_url = URL.findall(json.loads(data_line)["message"])[0]
    admin_url = URL.findall(json.loads(control_line)["message"])[0]
    ws = data_url.replace("http", "ws") + "/ws"

    printed = await every_admin_operation(admin_url, deployment, tmp_path)

    token = jwt.encode({"sub": "carol", "exp": int(time.time()) + 600, "tier": "gold"}, JWT_SECRET)
    async with (
        await Client.connect(ws, credential=SECRET, attributes={"tier": "gold"}) as alice,
        await Client.connect(ws, credential=SECRET) as bob,
        await Client.connect(ws, project="vault", credential=token) as carol,
    ):
        await alice.enter()
        await bob.enter()
        session = (await alice.next_event("session.created")).data["session_id"]
        await alice.send(session, {"secret-ish": SECRET})
        await bob.next_event("session.message")
        assert carol.player_id == "carol"
    stale = jwt.encode({"sub": "dan", "exp": int(time.time()) - 3600}, JWT_SECRET)
    with pytest.raises(MatchmakerError) as expired:
        await Client.connect(ws, project="vault", credential=stale)
    assert expired.value.code == "auth.invalid_credential"
    with pytest.raises(MatchmakerError) as refused:
        await Client.connect(ws, credential=WRONG_SECRET)
    assert refused.value.code == "auth.invalid_credential"
    await process.line_containing('"code":4003')  # the refused connection's close is logged

    lines = await process.stop()
    old_key = [] if deployment.key_file is None else ["--old-key-file", str(deployment.key_file)]
    printed += await admin_command(
        deployment.env,
        *("rotate-store-key", "--store", deployment.store_url, *old_key),
        *("--new-key-file", str(new_key_file(tmp_path / "new.key"))),
    )
    records = [json.loads(line) for line in lines if line.strip()]  # every line is JSON
    assert all({"time", "level", "logger", "message"} <= record.keys() for record in records)
    text = "".join(lines) + printed
    for secret in (KEY, SECRET, WRONG_KEY, WRONG_SECRET, APPLIED_SECRET, JWT_SECRET, token, stale):
        assert secret not in text
    events = [record.get("event") for record in records]
    assert events.count("hello") == 3
    assert events.count("close") >= 3
    hello = next(record for record in records if record.get("event") == "hello")
    assert hello["project"] == "vault"
    assert hello["client"].startswith("c")
    writes = [(r["method"], r["path"], r["status"]) for r in records if r.get("event") == "control"]
    for write in [
        ("POST", "/admin/projects", 201),
        ("PATCH", "/admin/projects/vault", 200),
        ("POST", "/admin/projects", 201),  # by apply
        ("DELETE", "/admin/projects/applied", 204),
        ("GET", "/admin/projects", 401),  # refusals are logged too
    ]:
        assert write in writes
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
