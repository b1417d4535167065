"""Write the JavaScript client's wire types (clients/js/src/protocol.ts) from the msgspec Structs.

The Python Structs of ``matchmaker.data.protocol`` (and the core's mode events and
answers, whose fields are the wire's) are the one source of truth: this renders
every request with its data and reply, and every event with its data, as
TypeScript. ``test_js_protocol.py`` beside this file fails while the
committed file differs from a fresh rendering, so a struct change that the
client does not follow fails CI (regenerate with ``python -m tests.matchmaker.data.js_protocol``,
then rebuild the client: ``npm run sync`` in clients/js).
"""

from __future__ import annotations

import sys
import typing
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi

from matchmaker.core import events
from matchmaker.core.modes import claim, delegated, mutual, propose
from matchmaker.data import webrtc
from matchmaker.data.protocol import events as wire_events
from matchmaker.data.protocol import replies
from matchmaker.data.protocol import requests as wire_requests

TARGET = Path(__file__).parents[3] / "clients" / "js" / "src" / "protocol.ts"

HEADER = """\
// The data plane's wire types, generated from the msgspec Structs of
// matchmaker.data.protocol (and the core's mode events and answers) by
// tests/matchmaker/data/js_protocol.py: do not edit. tests/matchmaker/data/test_js_protocol.py
// fails when this file is not what the Structs render.
"""

# What each request's reply carries. A request type missing here (or named here and
# gone from the protocol) makes rendering fail, and with it the test.
REPLIES: dict[str, object] = {
    "hello": replies.HelloReply,
    "ping": None,
    "pong": None,
    "bye": None,
    "pool.enter": replies.PoolEntered,
    "pool.leave": events.PoolLeft,
    "session.join": replies.SessionJoined,
    "session.leave": events.SessionLeft,
    "session.backfill": events.Backfilled,
    "session.send": replies.RelayReply,
    "rtc.signal": replies.RelayReply,
    "rtc.offer": webrtc.ChannelAnswer,
    "pool.list": claim.ListPage,
    "pool.watch": claim.Watching,
    "claim.make": claim.Claimed,
    "pick.add": mutual.Picked,
    "pick.remove": mutual.Picked,
    "proposal.create": propose.ProposalMade,
    "proposal.respond": propose.ProposalAnswered,
    "proposal.cancel": propose.ProposalAnswered,
    "delegate.attach": delegated.Attached,
    "delegate.form": delegated.Formed,
}


class _Renderer:
    """Collects the named object types a rendering refers to, each rendered once."""

    def __init__(self) -> None:
        self.named: dict[str, str] = {}
        self.owner: dict[str, type] = {}

    def spell(self, info: mi.Type) -> str:
        """The TypeScript spelling of one msgspec type."""
        simple = {
            mi.StrType: "string",
            mi.IntType: "number",
            mi.FloatType: "number",
            mi.BoolType: "boolean",
            mi.NoneType: "null",
            mi.AnyType: "unknown",
            mi.RawType: "unknown",
        }
        if type(info) in simple:
            return simple[type(info)]
        match info:
            case mi.ListType() | mi.VarTupleType():
                item = self.spell(info.item_type)
                return f"({item})[]" if "|" in item else f"{item}[]"
            case mi.DictType():
                return f"{{ [key: string]: {self.spell(info.value_type)} }}"
            case mi.LiteralType():
                return " | ".join(_literal(value) for value in info.values)
            case mi.UnionType():
                members = dict.fromkeys(self.spell(member) for member in info.types)
                return " | ".join(members)
            case mi.StructType() | mi.DataclassType():
                return self.interface(info)
        raise TypeError(f"no TypeScript rendering for {info!r}")

    def interface(self, info: mi.StructType | mi.DataclassType) -> str:
        """Render a Struct or dataclass as a named interface (once) and return its name."""
        name = self._name(info.cls)
        lines = [f"export interface {name} {{"]
        for field in info.fields:
            optional = "?" if not field.required and _omits_defaults(info) else ""
            lines.append(f"  {field.encode_name}{optional}: {self.spell(field.type)};")
        self.named[name] = "\n".join([*lines, "}"])
        return name

    def _name(self, cls: type) -> str:
        """The class name (one per idea: tests/matchmaker/test_one_definition.py)."""
        name = cls.__name__
        if self.owner.setdefault(name, cls) is not cls:
            raise TypeError(f"two different wire types are named {name}")
        return name

    def of(self, cls: object) -> str:
        """The TypeScript type of a reply or data class (``None``: no data)."""
        if cls is None:
            return "null"
        return self.spell(mi.type_info(cls))


def _literal(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _omits_defaults(info: mi.StructType | mi.DataclassType) -> bool:
    """Whether a field at its default is left out of the frame (else it is sent as is)."""
    if isinstance(info, mi.DataclassType):
        return False
    return bool(info.cls.__struct_config__.omit_defaults)


def _defined(classes: list[type[events.ModeEvent]]) -> list[type[events.ModeEvent]]:
    """The classes their module names (a ``slots=True`` dataclass leaves its first draft
    among the base's subclasses)."""
    return [cls for cls in classes if getattr(sys.modules[cls.__module__], cls.__name__) is cls]


def render() -> str:
    """The whole protocol.ts text."""
    renderer = _Renderer()
    requests: list[str] = []
    tags = []
    for cls in typing.get_args(wire_requests.Request):
        tag = str(cls.__struct_config__.tag)
        tags.append(tag)
        hints = typing.get_type_hints(cls)
        data_type = renderer.of(hints["data"]) if "data" in hints else "undefined"
        if tag not in REPLIES:
            raise KeyError(
                f"the request {tag!r} has no reply type in tests/matchmaker/data/js_protocol.py"
            )
        reply = renderer.of(REPLIES[tag])
        requests.append(f'  "{tag}": {{ data: {data_type}; reply: {reply} }};')
    unknown = set(REPLIES) - set(tags)
    if unknown:
        raise KeyError(
            f"tests/matchmaker/data/js_protocol.py names requests the protocol lacks: {unknown}"
        )
    pushed: list[str] = []
    for cls in wire_events.EventFrame.__subclasses__():
        hints = typing.get_type_hints(cls)
        if "data" in hints:
            tag = str(cls.__struct_config__.tag)
            pushed.append(f'  "{tag}": {renderer.of(hints["data"])};')
    for mode_event in _defined(events.ModeEvent.__subclasses__()):
        pushed.append(f'  "{mode_event.KIND}": {renderer.of(mode_event)};')
    error = renderer.of(replies.ErrorBody)
    return "\n".join(
        [
            HEADER,
            *(f"{body}\n" for body in renderer.named.values()),
            "/** Every request type: the `data` it sends and the `data` of its reply. */",
            "export interface Requests {",
            *requests,
            "}\n",
            "/** Every event (server push) type and its `data`. */",
            "export interface Events {",
            *pushed,
            "}\n",
            f"/** The `error` of a failed reply. */\nexport type WireError = {error};",
            "",
        ]
    )


if __name__ == "__main__":
    TARGET.write_text(render())
    print(f"wrote {TARGET}")
