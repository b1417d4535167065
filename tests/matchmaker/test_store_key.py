"""``--store-key-file`` at startup: one warning without it, a refusal under the wrong one."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from matchmaker import serve
from matchmaker.config import ServerConfig
from matchmaker.errors import MatchmakerError
from matchmaker.store import StoreKey, open_store
from tests.matchmaker.storekeys import new_key_file

from .store.conftest import project

KEY = "management-key-for-store-key-tests"


def key_file(tmp_path: Path, name: str) -> str:
    return str(new_key_file(tmp_path / name))


def config(tmp_path: Path, key_path: str | None) -> ServerConfig:
    return ServerConfig(
        port=0,
        management_port=0,
        management_key=KEY,
        store_url=f"sqlite:///{tmp_path / 'projects.db'}",
        store_key_file=key_path,
        server="hypercorn",
    )


async def test_without_a_store_key_one_warning_says_secrets_are_in_clear(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="matchmaker")
    async with serve(config(tmp_path, None)):
        pass
    warnings = [r.getMessage() for r in caplog.records if "stored in clear" in r.getMessage()]
    assert len(warnings) == 1
    assert "--store-key-file" in warnings[0]


async def test_with_a_store_key_no_warning_and_the_store_is_sealed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = key_file(tmp_path, "store.key")
    async with serve(config(tmp_path, path)):
        pass
    assert "stored in clear" not in caplog.text
    async with await open_store(config(tmp_path, path).store_url or "", StoreKey.from_file(path)):
        pass  # opens: the key the server used is the key the store is under


async def test_a_server_under_the_wrong_key_refuses_to_start_and_rewrites_nothing(
    tmp_path: Path,
) -> None:
    right = key_file(tmp_path, "right.key")
    url = config(tmp_path, right).store_url or ""
    async with await open_store(url, StoreKey.from_file(right)) as store:
        await store.create(project("kept", "a-client-secret"))
    before = (tmp_path / "projects.db").read_bytes()
    for wrong in (key_file(tmp_path, "wrong.key"), None):
        with pytest.raises(MatchmakerError) as refused:
            async with serve(config(tmp_path, wrong)):
                pass
        assert refused.value.code == "store.key_mismatch"
    assert (tmp_path / "projects.db").read_bytes() == before


async def test_an_unreadable_key_file_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(MatchmakerError) as refused:
        async with serve(config(tmp_path, str(tmp_path / "missing.key"))):
            pass
    assert refused.value.code == "store.bad_key"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o601])
async def test_a_key_file_its_group_or_others_may_use_refuses_to_start(
    tmp_path: Path, mode: int
) -> None:
    """As ``ssh`` refuses a private key others can read: the key opens every sealed secret.
    The refusal names the file and its mode, and nothing is written."""
    path = new_key_file(tmp_path / "store.key", mode)
    with pytest.raises(MatchmakerError) as refused:
        async with serve(config(tmp_path, str(path))):
            pass
    assert refused.value.code == "store.key_file_mode"
    assert str(path) in refused.value.message
    assert f"mode {mode:04o}" in refused.value.message
    assert not (tmp_path / "projects.db").exists()


def test_the_command_line_refuses_such_a_key_file_with_one_coded_line(tmp_path: Path) -> None:
    """The process stops at once (were the file used, it would serve until the timeout)."""
    path = new_key_file(tmp_path / "store.key", 0o644)
    store = f"sqlite:///{tmp_path / 'projects.db'}"
    flags = ["--port", "0", "--management-port", "0", "--management-key", KEY, "--store", store]
    result = subprocess.run(
        [sys.executable, "-m", "matchmaker", *flags, "--store-key-file", str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1
    assert errors[0].startswith(f"error: the store key file '{path}' has mode 0644")
    assert errors[0].endswith(" [store.key_file_mode]")
