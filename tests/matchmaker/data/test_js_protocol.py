"""The JavaScript client's wire types follow the protocol's msgspec Structs.

clients/js/src/protocol.ts is rendered from ``matchmaker.data.protocol`` (and the
core's mode events and answers) by tests/matchmaker/data/js_protocol.py; the client is written
against it, so a Struct change shows up in tsc as soon as the file is regenerated.
"""

from __future__ import annotations

import re
import typing

import msgspec
import pytest

from matchmaker.core import events
from matchmaker.data.protocol import events as wire_events
from matchmaker.data.protocol import payloads, replies
from matchmaker.data.protocol import requests as wire_requests
from tests.matchmaker.data.js_protocol import REPLIES, TARGET, render


def test_the_committed_types_are_what_the_structs_render() -> None:
    assert TARGET.read_text() == render(), (
        "clients/js/src/protocol.ts is stale: run `python -m tests.matchmaker.data.js_protocol`, "
        "then `npm run sync` in clients/js"
    )


def interface(text: str, name: str) -> set[str]:
    body = re.search(rf"export interface {name} \{{\n(.*?)\n\}}", text, re.S)
    assert body is not None, name
    return {line.strip().split(":")[0].rstrip("?") for line in body[1].splitlines()}


def test_every_request_event_and_field_is_on_both_sides() -> None:
    text = render()
    requests = re.search(r"export interface Requests \{\n(.*?)\n\}", text, re.S)
    pushed = re.search(r"export interface Events \{\n(.*?)\n\}", text, re.S)
    assert requests is not None
    assert pushed is not None
    request_tags = {
        str(cls.__struct_config__.tag) for cls in typing.get_args(wire_requests.Request)
    }
    assert set(re.findall(r'"([\w.]+)":', requests[1])) == request_tags == set(REPLIES)
    event_tags = {str(cls.__struct_config__.tag) for cls in wire_events.EventFrame.__subclasses__()}
    event_tags |= {cls.KIND for cls in events.ModeEvent.__subclasses__()}
    assert set(re.findall(r'"([\w.]+)":', pushed[1])) == event_tags - {"ping"}
    for struct in (payloads.PoolEnterData, replies.HelloReply, wire_events.SessionCreatedData):
        wire = {field.encode_name for field in msgspec.structs.fields(struct)}
        name = "SessionCreatedData" if struct is wire_events.SessionCreatedData else struct.__name__
        assert interface(text, name) == wire


class ChangedLeaveData(payloads.PoolLeaveData):
    """``pool.leave.data`` with a field the committed types lack."""

    reason: str | None = None


class ChangedLeave(wire_requests.PoolLeave, tag="pool.leave"):
    data: ChangedLeaveData


def test_a_struct_change_the_types_do_not_follow_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding a field to a wire Struct changes the rendering, so the committed file is stale."""
    union = typing.get_args(wire_requests.Request)
    changed = tuple(ChangedLeave if cls is wire_requests.PoolLeave else cls for cls in union)
    monkeypatch.setattr(wire_requests, "Request", typing.Union[changed])  # noqa: UP007
    assert "  reason?: string | null;" in render()
    assert render() != TARGET.read_text()
