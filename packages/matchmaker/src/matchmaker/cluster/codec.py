"""Commands, answers, events and errors as msgpack, for the streams between members.

Relayed payloads (``session.send`` ``data``) are ``msgspec.Raw`` JSON in the
core; they travel as msgpack bytes and become ``Raw`` again on arrival, so a
message is never decoded or re-encoded on its way between processes.
"""

from __future__ import annotations

from typing import Any

import msgspec

from matchmaker.core import commands, events
from matchmaker.core.effects import Close, Effect, Refuse, Reply
from matchmaker.errors import MatchmakerError

__all__ = [
    "decode",
    "decode_command",
    "decode_effect",
    "decode_event",
    "encode",
    "encode_command",
    "encode_effect",
    "encode_event",
]

_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(dict[str, Any])

_COMMANDS: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        commands.EnterPool,
        commands.LeavePool,
        commands.JoinSession,
        commands.LeaveSession,
        commands.Send,
    )
}
_VALUES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        events.PoolEntered,
        events.PoolLeft,
        events.SessionJoined,
        events.SessionLeft,
        events.Relayed,
        events.Alive,
        events.SessionCreated,
        events.MessageRelayed,
        events.MemberJoined,
        events.MemberLeft,
        events.PoolWithdrawn,
        events.PoolExpired,
        events.PoolClosed,
    )
}


def encode(message: dict[str, Any]) -> bytes:
    return _ENCODER.encode(message)


def decode(data: bytes) -> dict[str, Any]:
    return _DECODER.decode(data)


def _builtins(value: object) -> Any:
    return msgspec.to_builtins(value, builtin_types=(bytes,))


def encode_command(command: commands.Command) -> list[Any]:
    if type(command) is commands.Send:
        fields = {"session_id": command.session_id, "data": bytes(command.data), "to": command.to}
    else:
        fields = _builtins(command)
    return [type(command).__name__, fields]


def decode_command(value: list[Any]) -> commands.Command:
    cls = _COMMANDS[value[0]]
    if cls is commands.Send:
        fields = value[1]
        return commands.Send(fields["session_id"], msgspec.Raw(fields["data"]), fields["to"])
    command: commands.Command = msgspec.convert(value[1], cls)
    return command


def encode_event(value: events.Event | events.Answer) -> list[Any]:
    if type(value) is events.MessageRelayed:
        data = value.data
        raw = data if isinstance(data, bytes | msgspec.Raw) else msgspec.json.encode(data)
        fields = {"session_id": value.session_id, "sender": value.sender, "data": bytes(raw)}
    else:
        fields = _builtins(value)
    return [type(value).__name__, fields]


def decode_event(value: list[Any]) -> Any:
    cls = _VALUES[value[0]]
    if cls is events.MessageRelayed:
        fields = value[1]
        return events.MessageRelayed(
            fields["session_id"], fields["sender"], msgspec.Raw(fields["data"])
        )
    return msgspec.convert(value[1], cls)


def encode_effect(effect: Reply | Refuse | Close) -> list[Any]:
    match effect:
        case Reply(request_id=request_id, answer=answer):
            return ["reply", request_id, encode_event(answer)]
        case Refuse(request_id=request_id, error=error):
            return ["refuse", request_id, error.code, str(error), error.details]
        case Close(code=code, reason=reason):
            return ["close", code, reason]


def decode_effect(value: list[Any]) -> Effect:
    kind = value[0]
    if kind == "reply":
        return Reply(value[1], decode_event(value[2]))
    if kind == "refuse":
        return Refuse(value[1], MatchmakerError(value[3], code=value[2], details=value[4]))
    return Close(value[1], value[2])
