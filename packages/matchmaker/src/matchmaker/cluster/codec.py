"""Commands, answers, events and errors as plain values, inside the messages between members.

Every dataclass of :mod:`matchmaker.core.commands` and :mod:`matchmaker.core.events`
travels as ``[class name, fields]``. Relayed payloads (``session.send`` ``data``,
``rtc.signal``) are ``msgspec.Raw`` JSON in the core; they travel as msgpack bytes
and become ``Raw`` again on arrival, so a message is never decoded or re-encoded
on its way between processes. The messages that carry them are :mod:`.messages`.
"""

from __future__ import annotations

import dataclasses
from types import ModuleType
from typing import Any

import msgspec

from matchmaker.core import commands, events, parties
from matchmaker.core.effects import Close, Effect, Refuse, ReplyWith
from matchmaker.core.modes import claim, delegated, mutual, propose, strategy
from matchmaker.errors import MatchmakerError

__all__ = ["decode_effect", "decode_value", "encode_effect", "encode_value"]

_RAW = "__raw__"


def _dataclasses(modules: list[ModuleType]) -> dict[str, type]:
    """Every dataclass of the core's commands and events and of the modes' answers and events."""
    found = (getattr(module, name) for module in modules for name in dir(module))
    return {
        cls.__name__: cls
        for cls in found
        if isinstance(cls, type) and dataclasses.is_dataclass(cls)
    }


_TYPES: dict[str, type] = _dataclasses(
    [commands, events, claim, mutual, propose, delegated, strategy, parties]
)


_NAMES: dict[type, tuple[str, ...]] = {
    cls: tuple(field.name for field in dataclasses.fields(cls)) for cls in _TYPES.values()
}


def encode_value(value: Any) -> list[Any]:
    """A command, answer or event as ``[class name, fields]``."""
    cls = type(value)
    fields: dict[str, Any] = {}
    for name in _NAMES[cls]:
        item = getattr(value, name)
        if isinstance(item, msgspec.Raw):
            fields[name] = {_RAW: bytes(item)}
        else:
            fields[name] = msgspec.to_builtins(item, builtin_types=(bytes,))
    return [cls.__name__, fields]


def decode_value(value: list[Any]) -> Any:
    cls = _TYPES[value[0]]
    raws: dict[str, msgspec.Raw] = {}
    fields: dict[str, Any] = {}
    for name, item in value[1].items():
        if isinstance(item, dict) and _RAW in item and len(item) == 1:
            raws[name] = msgspec.Raw(item[_RAW])
            fields[name] = b""
        else:
            fields[name] = item
    decoded: Any = msgspec.convert(fields, cls)
    return dataclasses.replace(decoded, **raws) if raws else decoded


def encode_effect(effect: ReplyWith | Refuse | Close) -> list[Any]:
    match effect:
        case ReplyWith(request_id=request_id, answer=answer):
            return ["reply", request_id, encode_value(answer)]
        case Refuse(request_id=request_id, error=error):
            return ["refuse", request_id, error.code, str(error), error.details]
        case Close(code=code, reason=reason):
            return ["close", code, reason]


def decode_effect(value: list[Any]) -> Effect:
    kind = value[0]
    if kind == "reply":
        return ReplyWith(value[1], decode_value(value[2]))
    if kind == "refuse":
        return Refuse(value[1], MatchmakerError(value[3], code=value[2], details=value[4]))
    return Close(value[1], value[2])
