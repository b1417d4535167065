"""The cluster's pure parts: rendezvous ownership and the wire codec between members."""

from __future__ import annotations

from typing import get_args

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchmaker.cluster import codec, messages
from matchmaker.cluster.messages import (
    Answers,
    Away,
    Back,
    Command,
    Events,
    Forgot,
    Gone,
    Handover,
    Hold,
    Host,
    Moved,
    Offer,
    Opening,
    PartyClosed,
    PartyWithdraw,
    Rehomed,
    Seated,
    Told,
    TunnelClose,
    TunnelEnd,
    TunnelFrame,
    TunnelOpen,
    TunnelOut,
    Unmirror,
    Unseat,
    Withdraw,
)
from matchmaker.cluster.ring import host, node_of, owner, pool_key
from matchmaker.core.commands import EnterPool, MakeClaim, PartyMemberView, PartyView, Send
from matchmaker.core.effects import Close, Refuse, ReplyWith
from matchmaker.core.events import (
    EnteredPool,
    MemberJoined,
    MessageRelayed,
    PublicMember,
    SessionFormed,
)
from matchmaker.errors import MatchmakerError
from matchmaker.model import Balance, RangeRule, Regions, Team, Widen

NAMES = st.lists(
    st.text("abcdef0123456789", min_size=4, max_size=8), min_size=2, max_size=6, unique=True
)


@given(NAMES, st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=50))
def test_a_departure_moves_only_the_keys_the_departed_owned(
    members: list[str], keys: list[str]
) -> None:
    gone = members[0]
    rest = members[1:]
    for key in keys:
        before = owner(key, members)
        assert owner(key, list(reversed(members))) == before  # order does not matter
        if before != gone:
            assert owner(key, rest) == before


@given(NAMES, st.data())
def test_a_session_is_hosted_where_most_of_its_members_are(
    members: list[str], data: st.DataObject
) -> None:
    former = members[0]
    homes = data.draw(st.lists(st.sampled_from(members), min_size=1, max_size=8))
    session_id = f"s{former}-1"
    chosen = host(session_id, homes)
    assert homes.count(chosen) == max(homes.count(m) for m in homes)  # the most members
    assert host(session_id, list(reversed(homes))) == chosen  # every home agrees
    if former in homes and homes.count(former) == homes.count(chosen):
        assert chosen == former  # the member that formed it breaks a tie


def test_keys_spread_over_members() -> None:
    members = ["a1b2", "c3d4", "e5f6"]
    owners = [owner(pool_key("game", f"pool{i}"), members) for i in range(300)]
    assert all(owners.count(m) > 50 for m in members)


def test_node_of_reads_minted_ids_only() -> None:
    assert node_of("c1a2b3c4-17") == "1a2b3c4"
    assert node_of("s1a2b3c4-3") == "1a2b3c4"
    assert node_of("lobby") is None
    assert node_of("c-1") is None
    assert node_of("sx-y") is None


def test_commands_events_and_effects_survive_the_wire() -> None:
    values = [
        EnterPool(pool="duel", create=True, mode="auto", group_size=2, public={"n": [1, 2]}),
        EnterPool(
            pool="ranked",
            create=True,
            mode="auto",
            group_size=4,
            min_group_size=2,
            fill_timeout_ms=9,
            filter={"r": RangeRule(10, Widen(5, 1.5, 30)), "a": "@self"},
        ),
        EnterPool(
            pool="duo",
            create=True,
            mode="auto",
            group_size=2,
            teams=[Team("red", 1), Team("blue", 1)],
            balance=Balance("rating", 50, Widen(1000, 10, 100)),
            regions=Regions(80, Widen(1000, 20, 150)),
            latencies={"eu": 30, "us": 90},
        ),
        MakeClaim("claims", ["c1-2", "c3-4"]),
        SessionFormed(
            "sab-1", [PublicMember("cab-1", {"x": 1}), PublicMember("cab-2")], "cab-1", "p"
        ),
        SessionFormed("sab-2", [PublicMember("cab-1")], "cab-1", "duo", {"red": ["cab-1"]}, "eu"),
        MemberJoined("sab-2", "cab-3", None, None, "red"),
        EnteredPool("duel", "eab-3", "auto", 2, 123),
    ]
    for value in values:
        sent: list[messages.Message] = [Events(["c1-1"], codec.encode_value(value))]
        wire = messages.decode(messages.encode("ab", sent)).messages[0]
        assert isinstance(wire, Events)
        assert codec.decode_value(wire.event) == value


def test_relayed_payloads_stay_raw_bytes() -> None:
    raw = msgspec.Raw(b'{"move":"e4","n":[1,2,3]}')
    command = Command(
        "cab-1", "p", None, {}, None, "1", codec.encode_value(Send("sab-1", raw, ["cab-2"]))
    )
    (wire,) = messages.decode(messages.encode("ab", [command])).messages
    assert wire == command
    assert isinstance(wire, Command)
    send = codec.decode_value(wire.command)
    assert isinstance(send.data, msgspec.Raw)
    assert bytes(send.data) == bytes(raw)
    relayed = codec.decode_value(codec.encode_value(MessageRelayed("sab-1", "cab-1", raw)))
    assert isinstance(relayed.data, msgspec.Raw)
    assert bytes(relayed.data) == bytes(raw)


def test_every_message_between_members_is_one_typed_struct_on_the_wire() -> None:
    hello = codec.encode_value(EnterPool(pool="duel"))
    sent: list[messages.Message] = [
        Command("cab-1", "p", "secret", {"region": "eu"}, "player-1", "7", hello),
        Answers("cab-1", [codec.encode_effect(Close(3029, "x"))]),
        Events(["cab-1", "cab-2"], hello),
        Gone("cab-1"),
        Withdraw("cab-1"),
        Away("cab-1"),
        Back("cab-1"),
        Hold("cab-1"),
        PartyWithdraw("pab-3"),
        PartyClosed("cab-1", "squad", "5"),
        TunnelOpen("ab-1", "ab", None, hello),
        TunnelFrame("ab-1", '{"type":"ping"}'),
        TunnelEnd("ab-1", 1001),
        TunnelOut("ab-1", '{"type":"pong"}'),
        TunnelClose("ab-1", 1001, "gone"),
        Opening(
            "sab-1",
            "p",
            "ranked",
            True,
            codec.encode_value(EnterPool(pool="ranked", mode="auto", group_size=3)),
            [["string", "eu"]],
            [("cab-1", {"rating": 1200, "region": "eu"})],
            2,
            1_000,
        ),
        Unmirror("sab-1"),
        Offer("sab-1", "ecd-4", "cef-2", "p", None, {"rating": 1250}, None, {"name": "x"}),
        Seated("sab-1", "ecd-4", "cef-2", codec.encode_value(EnterPool(pool="duel"))),
        Seated("sab-1", "ecd-5", "cef-3", None),
        Unseat("sab-1", "cef-2"),
        Told("sab-1", "cef-2"),
        Forgot(),
        Host("sab-1", "p", "ranked", None, [["cab-1", None, None, [None, {"rating": 1}]]]),
        Moved("sab-1", "cd"),
        Handover("cab-1", "p", None, {"region": "eu"}, None, "ab.t0k", 3, ['{"seq":3}'], [], {}),
        Rehomed("cab-1", "cd"),
    ]
    assert messages.decode(messages.encode("ab", sent)) == messages.Entry("ab", sent)
    assert len({type(m) for m in sent}) == len(get_args(messages.Message))


def test_a_partys_view_travels_inside_its_pool_enter() -> None:
    view = PartyView("pab-3", "7KQM2XHD", "cab-1", [PartyMemberView("cab-1", None, {"r": 1})])
    command = EnterPool(policy="squad", party_id="pab-3", party=view)
    assert codec.decode_value(codec.encode_value(command)) == command


def test_an_unknown_message_kind_does_not_decode() -> None:
    entry = msgspec.msgpack.encode(["ab", [["nope", "cab-1"]]])
    with pytest.raises(msgspec.ValidationError, match="nope"):
        messages.decode(entry)


def test_effects_keep_code_details_and_request_id() -> None:
    error = MatchmakerError("nope", code="pool.conflict", details={"pool": "duel"})
    refuse = codec.decode_effect(codec.encode_effect(Refuse("7", error)))
    assert isinstance(refuse, Refuse)
    assert refuse.request_id == "7"
    assert refuse.error.code == "pool.conflict"
    assert refuse.error.details == {"pool": "duel"}
    reply = codec.decode_effect(
        codec.encode_effect(ReplyWith("8", EnteredPool("d", "e", "auto", 2, 1)))
    )
    assert reply == ReplyWith("8", EnteredPool("d", "e", "auto", 2, 1))
    assert codec.decode_effect(codec.encode_effect(Close(3029, "x"))) == Close(3029, "x")


def _subclasses(cls: type) -> set[type]:
    out: set[type] = set(cls.__subclasses__())
    for sub in list(out):
        out |= _subclasses(sub)
    return out


def test_every_answer_event_and_command_can_cross() -> None:
    from typing import get_args

    from matchmaker.core import commands, events

    kinds = {*get_args(events.Event), *get_args(events.Answer), *get_args(commands.ClientCommand)}
    kinds |= _subclasses(events.ModeEvent) | _subclasses(events.ModeAnswer)
    # By name: ``dataclass(slots=True)`` replaces a class, and ``__subclasses__`` may still
    # list the replaced one.
    # ``rtc.offer`` (answered by ChannelAnswer) is served where the client is, never forwarded;
    # a backfill's notes are read by the router of the member whose core made them, which
    # sends its own messages (Opening, Offer) instead.
    crossing = {cls.__name__ for cls in kinds} - set(codec._TYPES)
    assert crossing <= {"ChannelAnswer", "SeatsChanged", "SeatOffered"}
