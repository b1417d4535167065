"""The protocol rules of one connection, driven without sockets: commands in, effects out."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from matchmaker.config import Limits
from matchmaker.core import Matchmaker, closecodes
from matchmaker.core.commands import (
    CheckAlive,
    EnterPool,
    Greet,
    JoinSession,
    LeavePool,
    ResumeFrom,
    SayGoodbye,
    Send,
)
from matchmaker.core.conversation import ABUSE_LIMIT, Conversation
from matchmaker.core.effects import Close, PingClient, Refuse, ReplyWith, ResumeElsewhere
from matchmaker.core.events import (
    Alive,
    EnteredPool,
    JoinedSession,
    MessageRelayed,
    PoolLeft,
    Relayed,
    Welcome,
)
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, ProjectKey

SOLO = MatchmakingPolicy(name="solo", mode="auto", group_size=1, default=True)
KEYED = Project(id="k", keys=(ProjectKey(type="shared-secret", secret="s3cret"),))


def conversation(
    core: Matchmaker | None = None, *, require_declared: bool = False, **limits: float
) -> Conversation:
    core = core or Matchmaker(Limits(**limits), node="t")  # type: ignore[arg-type]
    directory = ProjectDirectory([Project(id="p", policies=(SOLO,)), KEYED])
    return Conversation(core, directory, require_declared=require_declared, now_ms=0)


def codes(effects: Sequence[object]) -> list[object]:
    """Each effect reduced to what it says: an error code, a close code, an answer type."""
    out: list[object] = []
    for effect in effects:
        match effect:
            case Refuse(error=error):
                out.append(error.code)
            case Close(code=code):
                out.append(code)
            case ReplyWith(answer=answer):
                out.append(type(answer))
            case _:
                out.append(type(effect))
    return out


def welcome(talk: Conversation, **hello: object) -> Welcome:
    (reply,) = talk.receive(Greet(1, **hello), "h", 0)  # type: ignore[arg-type]
    assert isinstance(reply, ReplyWith)
    assert isinstance(reply.answer, Welcome)
    return reply.answer


def test_only_hello_ping_pong_and_bye_before_hello() -> None:
    talk = conversation()
    assert codes(talk.receive(EnterPool(), "1", 0)) == ["protocol.not_ready"]
    assert codes(talk.receive(CheckAlive(), "2", 0)) == [Alive]
    assert talk.client is None
    answer = welcome(talk, project="p")
    assert (answer.project.id, answer.client_id) == ("p", getattr(talk.client, "client_id", None))
    assert codes(talk.receive(Greet(1), "3", 0)) == ["protocol.bad_request"]
    assert codes(talk.receive(SayGoodbye(), None, 0)) == [closecodes.BYE]


@pytest.mark.parametrize(
    ("hello", "expected"),
    [
        (Greet(2), ["protocol.bad_request"]),
        (Greet(1, attributes={f"a{i}": 1 for i in range(33)}), ["protocol.bad_request"]),
        (Greet(1, attributes={"a": "x" * 257}), ["protocol.bad_request"]),
        (Greet(1, credential="wrong"), ["auth.invalid_credential", closecodes.FORBIDDEN]),
        (Greet(1, project="k"), ["project.forbidden", closecodes.FORBIDDEN]),
        (Greet(1, resume=ResumeFrom("t")), ["resume.expired", closecodes.RESUME_EXPIRED]),
    ],
)
def test_hello_rules(hello: Greet, expected: list[object]) -> None:
    talk = conversation()
    assert codes(talk.receive(hello, "h", 0)) == expected
    assert talk.client is None
    assert talk.core.clients == {}


def test_a_token_names_its_issuer_and_another_members_token_is_handed_over() -> None:
    """In a cluster (the core has a node name) a token reads ``<node>.<random>``: the
    issuer resumes it, another member hands the hello over to the issuer, untouched."""
    issuer = conversation()
    token = welcome(issuer, project="p").resume_token
    assert token.startswith("t.")
    elsewhere = conversation(Matchmaker(Limits(), node="u"))
    hello = Greet(1, project="p", resume=ResumeFrom(token, 3))
    assert elsewhere.receive(hello, "h", 0) == [ResumeElsewhere("h", hello, "t")]
    assert elsewhere.client is None
    # A single process's tokens name nobody: an unknown token is just expired there.
    alone = Matchmaker(Limits())
    directory = ProjectDirectory([Project(id="p")])

    def talk() -> Conversation:
        return Conversation(alone, directory, require_declared=False, now_ms=0)

    assert "." not in welcome(talk(), project="p").resume_token
    assert codes(talk().receive(hello, "h", 0)) == ["resume.expired", closecodes.RESUME_EXPIRED]


def test_undeclared_project_closes_when_declaration_is_required() -> None:
    talk = conversation(require_declared=True)
    effects = talk.receive(Greet(1, project="nope"), "h", 0)
    assert codes(effects) == ["project.not_found", closecodes.FORBIDDEN]


def test_requests_reach_the_core_and_answer_before_their_events() -> None:
    talk = conversation()
    welcome(talk, project="p")
    effects = talk.receive(EnterPool(), "e", 0)
    # The reply first, then the session.created of a group of one.
    assert codes(effects) == [EnteredPool, tuple]
    assert codes(talk.receive(LeavePool("solo"), "l", 0)) == ["pool.not_found"]
    (joined, _) = talk.receive(JoinSession("room", create=True), "j", 0)
    assert isinstance(joined, ReplyWith)
    assert isinstance(joined.answer, JoinedSession)
    session_id = joined.answer.session_id
    sent = talk.receive(Send(session_id, b"1"), "s", 0)
    assert isinstance(sent[0], tuple)
    assert isinstance(sent[0][1], MessageRelayed)
    assert codes(sent[1:]) == [Relayed]
    assert len(talk.receive(Send(session_id, b"1"), None, 0)) == 1  # no id, no reply


def test_sizes_measured_by_the_shell_are_limited() -> None:
    talk = conversation(max_send_bytes=4)
    welcome(talk, project="p")
    assert codes(talk.receive(EnterPool(public_size=5), "e", 0)) == ["protocol.too_large"]
    assert codes(talk.receive(Send("s", b"12345"), "s", 0)) == ["protocol.too_large"]


def test_leave_pool_answers_the_withdrawn_entry() -> None:
    core = Matchmaker(Limits(), node="t")
    talk = conversation(core)
    welcome(talk)
    (reply,) = talk.receive(EnterPool(pool="x", create=True, mode="auto", group_size=2), "e", 0)
    assert isinstance(reply, ReplyWith)
    (left,) = talk.receive(LeavePool("x"), "l", 0)
    assert left == ReplyWith("l", PoolLeft("x", reply.answer.entry_id))  # type: ignore[union-attr]


def test_leave_pool_naming_an_entry_leaves_only_that_one() -> None:
    """A cluster member moving an entry names it: a newer entry in that pool stays."""
    core = Matchmaker(Limits(), node="t")
    talk = conversation(core)
    welcome(talk)
    (reply,) = talk.receive(EnterPool(pool="x", create=True, mode="auto", group_size=2), "e", 0)
    assert isinstance(reply, ReplyWith)
    assert isinstance(reply.answer, EnteredPool)
    entry_id = reply.answer.entry_id
    assert codes(talk.receive(LeavePool("x", "et-older"), "l", 0)) == ["pool.not_found"]
    (left,) = talk.receive(LeavePool("x", entry_id), "l", 0)
    assert left == ReplyWith("l", PoolLeft("x", entry_id))


def test_rate_limit_refuses_then_closes_after_repeated_abuse() -> None:
    talk = conversation(control_rate_per_s=1.0, control_burst=1)
    assert codes(talk.receive(CheckAlive(), "1", 0)) == [Alive]
    (refused,) = talk.receive(CheckAlive(), "2", 0)
    assert isinstance(refused, Refuse)
    assert refused.error.details == {"retry_after_ms": 1000}
    error = MatchmakerError("bad", code="protocol.bad_request")
    assert codes(talk.refuse(None, error, 0)) == ["rate.limited"]
    for _ in range(ABUSE_LIMIT - 3):
        assert codes(talk.receive(CheckAlive(), None, 0)) == ["rate.limited"]
    assert codes(talk.receive(CheckAlive(), None, 0)) == [closecodes.RATE_LIMITED]


def test_send_has_its_own_bucket() -> None:
    talk = conversation(control_rate_per_s=1.0, control_burst=3, send_burst=5)
    welcome(talk)
    talk.receive(JoinSession("r", create=True), None, 0)
    (session_id,) = talk.client.sessions  # type: ignore[union-attr]
    assert codes(talk.receive(CheckAlive(), None, 0)) == [Alive]
    assert codes(talk.receive(CheckAlive(), None, 0)) == ["rate.limited"]
    assert codes(talk.receive(Send(session_id, b"1"), "s", 0)) == [tuple, Relayed]


def test_a_clock_set_back_neither_refills_nor_locks_the_bucket() -> None:
    talk = conversation(control_rate_per_s=1.0, control_burst=1)
    assert codes(talk.receive(CheckAlive(), "1", 10_000)) == [Alive]
    (refused,) = talk.receive(CheckAlive(), "2", 4_000)  # the wall clock stepped back 6 s
    assert isinstance(refused, Refuse)
    assert refused.error.details == {"retry_after_ms": 1000}
    assert codes(talk.receive(CheckAlive(), "3", 5_000)) == [Alive]  # a second later, as ever


def test_heartbeat_pings_a_silent_client_once_per_interval_then_closes() -> None:
    talk = conversation(heartbeat_interval_ms=1000, heartbeat_timeout_ms=2500)
    assert talk.heartbeat(500) is None
    assert talk.heartbeat(1000) == PingClient()
    assert talk.heartbeat(1500) is None
    talk.receive(CheckAlive(), None, 1800)  # any frame counts as liveness
    assert talk.heartbeat(2600) is None
    assert talk.heartbeat(2900) == PingClient()
    assert talk.heartbeat(4400) == Close(closecodes.HEARTBEAT_TIMEOUT, "heartbeat timeout")


def test_handshake_timeout_closes_only_before_hello() -> None:
    talk = conversation()
    assert talk.handshake_expired() == [Close(closecodes.HANDSHAKE_TIMEOUT, "no hello")]
    welcome(talk)
    assert talk.handshake_expired() == []


def test_disconnect_leaves_the_core_once() -> None:
    core = Matchmaker(Limits(), node="t")
    a, b = conversation(core), conversation(core)
    welcome(a)
    welcome(b)
    a.receive(JoinSession("r", create=True), None, 0)
    b.receive(JoinSession("r"), None, 0)
    (left,) = a.disconnect(0)
    assert list(left[0]) == [b.client.client_id]  # type: ignore[union-attr]
    assert a.disconnect(0) == []
    assert a.client is None
    assert set(core.clients) == {b.client.client_id}  # type: ignore[union-attr]


def test_entry_expiry_is_set_from_the_time_the_request_arrived() -> None:
    core = Matchmaker(Limits(entry_ttl_ms=500), node="t")
    talk = Conversation(core, ProjectDirectory(), require_declared=False, now_ms=0)
    welcome(talk)
    enter = EnterPool(pool="x", create=True, mode="auto", group_size=2)
    (reply,) = talk.receive(enter, "e", 7_000)
    assert isinstance(reply, ReplyWith)
    assert isinstance(reply.answer, EnteredPool)
    assert reply.answer.expires_at == 7_500
    assert core.expire(7_499) == []
    assert len(core.expire(7_500)) == 1


def test_a_proxy_speaks_for_a_client_another_member_connected() -> None:
    proxy = conversation()
    proxy.adopt("cab-7", "p", None, {"region": "eu"})
    assert proxy.core.clients["cab-7"] is proxy.client
    assert codes(
        proxy.receive(EnterPool(pool="duel", create=True, mode="auto", group_size=2), "1", 0)
    ) == [EnteredPool]
    assert list(proxy.core.clients["cab-7"].entries) == ["duel"]
    assert proxy.disconnect(0) == []
    assert "cab-7" not in proxy.core.clients


def test_a_replaced_conversation_leaves_its_client_be() -> None:
    old = conversation()
    old.receive(Greet(1, project="p"), "h", 0)
    client = old.client
    assert client is not None
    old.replaced()
    assert old.disconnect(0, resumable=False) == []
    assert old.core.clients[client.client_id] is client


def test_a_charged_request_counts_as_hearing_from_the_client() -> None:
    talk = conversation()
    talk.receive(Greet(1, project="p"), "h", 0)
    assert talk.admit(CheckAlive(), "1", 42_000) is None
    assert talk.last_seen_ms == 42_000


@pytest.mark.parametrize("entry", ["receive", "relay_message"])
def test_a_numbered_send_is_taken_once_and_a_gap_is_refused(entry: str) -> None:
    talk = conversation()
    welcome(talk, project="p")
    (joined, _) = talk.receive(JoinSession("room", create=True), "j", 0)
    assert isinstance(joined, ReplyWith)
    assert isinstance(joined.answer, JoinedSession)
    room = joined.answer.session_id

    def send(seq: int, request_id: str | None, session_id: str = room) -> list[object]:
        if entry == "receive":
            return list(talk.receive(Send(session_id, b"1", seq=seq), request_id, 0))
        return list(talk.relay_message(session_id, None, b"1", request_id, 0, seq=seq))

    assert codes(send(1, "a")) == [tuple, Relayed]  # taken: relayed, answered
    duplicate = send(1, "b")
    assert codes(duplicate) == [Relayed]  # not relayed again
    assert isinstance(duplicate[0], ReplyWith)
    assert duplicate[0].answer == Relayed(duplicate=True)
    assert send(1, None) == []  # a duplicate without an id: nothing at all
    (gap,) = send(3, "c")
    assert isinstance(gap, Refuse)
    assert gap.error.code == "protocol.bad_request"
    assert gap.error.details == {"field": "seq", "expected": 2, "seq": 3}
    (failed,) = send(2, "d", session_id="gone")  # taken, then refused: its seq is spent
    assert isinstance(failed, Refuse)
    assert failed.error.code == "session.not_found"
    assert failed.error.details == {"session_id": "gone", "seq": 2}
    assert talk.client is not None
    assert talk.client.ack == 2
    assert codes(send(3, None)) == [tuple]


def test_the_cluster_takes_a_numbered_send_before_forwarding_it() -> None:
    """``sequence``: the rule alone, where the client's ack lives (its home member)."""
    talk = conversation()
    welcome(talk, project="p")
    assert talk.sequence(Send("s", b"1", seq=1), None) is None
    assert talk.sequence(Send("s", b"1", seq=1), None) == []
    (gap,) = talk.sequence(Send("s", b"1", seq=5), "g") or []
    assert isinstance(gap, Refuse)
    assert gap.error.details == {
        "field": "seq",
        "expected": 2,
        "seq": 5,
    }


def test_a_resumed_welcome_says_the_ack() -> None:
    core = Matchmaker(Limits(), node="t")
    first = conversation(core)
    token = welcome(first, project="p").resume_token
    (joined, _) = first.receive(JoinSession("room", create=True), "j", 0)
    assert isinstance(joined, ReplyWith)
    assert isinstance(joined.answer, JoinedSession)
    for seq in (1, 2):
        first.receive(Send(joined.answer.session_id, b"1", seq=seq), None, 0)
    first.disconnect(0, resumable=True)
    (resumed, *_) = conversation(core).receive(
        Greet(1, project="p", resume=ResumeFrom(token)), "h", 0
    )
    assert isinstance(resumed, ReplyWith)
    assert isinstance(resumed.answer, Welcome)
    assert resumed.answer.ack == 2
    assert welcome(conversation(core), project="p").ack is None  # a fresh hello: none


def test_a_proxy_relays_a_numbered_send_its_home_took() -> None:
    """A cluster member's proxy of another member's client: the home took the seq (what
    came before it may have gone elsewhere), so the proxy relays it and names it on error."""
    talk = conversation()
    talk.adopt("home.1", "p", None, {})
    (joined, _) = talk.receive(JoinSession("room", create=True), "j", 0)
    assert isinstance(joined, ReplyWith)
    assert isinstance(joined.answer, JoinedSession)
    assert codes(talk.receive(Send(joined.answer.session_id, b"1", seq=5), None, 0)) == [tuple]
    (refused,) = talk.receive(Send("gone", b"1", seq=6), None, 0)
    assert isinstance(refused, Refuse)
    assert refused.error.details == {"session_id": "gone", "seq": 6}
