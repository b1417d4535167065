"""One name rule for both planes: what ``/admin`` accepts as a name, ``hello`` and
``pool.enter`` accept, and the other way round."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from matchmaker.config import ControlLimits, Limits
from matchmaker.control.validation import decode_project
from matchmaker.data.protocol.requests import REQUEST_DECODER
from matchmaker.errors import MatchmakerError
from matchmaker.model import MAX_NAME_CHARS, MAX_SECRET_CHARS

NAMES = [
    ("x", True),
    ("日本/team red", True),
    ("x" * MAX_NAME_CHARS, True),
    ("x" * (MAX_NAME_CHARS + 1), False),
    ("x" * 5000, False),
    ("", False),
    ("a\nb", False),
    ("a\x00b", False),
    ("a\x1b[31m", False),
    ("a\x7f", False),
]


def _accepted(decode: Any, value: Any) -> bool:
    try:
        decode(msgspec.json.encode(value))
    except (msgspec.ValidationError, MatchmakerError):
        return False
    return True


def _admitted(body: dict[str, Any]) -> bool:
    """Whether ``/admin`` would store ``body`` (its whole validation)."""
    return _accepted(lambda raw: decode_project(raw, Limits(), ControlLimits()), body)


def _control(project_id: str = "p", policy: str = "p") -> bool:
    body = {"id": project_id, "policies": [{"name": policy, "mode": "auto", "groupSize": 2}]}
    return _admitted(body)


def _data(kind: str, data: dict[str, Any]) -> bool:
    return _accepted(REQUEST_DECODER.decode, {"type": kind, "id": "1", "data": data})


@pytest.mark.parametrize(("name", "valid"), NAMES)
def test_both_planes_apply_one_name_rule(name: str, valid: bool) -> None:
    assert _control(project_id=name) is valid
    assert _control(policy=name) is valid
    assert _data("hello", {"v": 1, "project": name}) is valid
    assert _data("pool.enter", {"policy": name}) is valid
    assert _data("pool.enter", {"pool": name, "create": True}) is valid
    assert _data("session.join", {"session": name}) is valid


def test_secrets_are_capped() -> None:
    def key(secret: str) -> bool:
        return _admitted({"id": "p", "keys": [{"type": "shared-secret", "secret": secret}]})

    assert key("s" * MAX_SECRET_CHARS)
    assert not key("s" * (MAX_SECRET_CHARS + 1))
    assert not key("s" * 900_000)
