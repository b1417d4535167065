"""``jwt`` credentials in the core, without sockets: which Project, which player, which
trusted attributes, and every refusal with its reason."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.config import Limits
from matchmaker.core import Matchmaker
from matchmaker.core.admission.tokens import LEEWAY_S
from matchmaker.core.commands import EnterPool, Greet, JoinSession, ResumeFrom
from matchmaker.core.conversation import Conversation
from matchmaker.core.effects import Effect, Refuse, ReplyWith
from matchmaker.core.events import SessionFormed, Welcome
from matchmaker.core.projects import resolve_hello
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, ProjectKey
from tests.matchmaker.jwtkeys import ALGORITHMS, AUDIENCE, ISSUER, signer

NOW = 1_800_000_000.0
NOW_MS = int(NOW * 1000)  # the core's clock
RATED = {"rating": "attributes.rating", "region": "attributes.region"}
DUEL = MatchmakingPolicy(name="duel", mode="auto", group_size=2, default=True)


def game(**fields: Any) -> Project:
    """Project ``game``: one key per algorithm, of :data:`ISSUER` for :data:`AUDIENCE`."""
    keys = tuple(signer(a).key(issuer=ISSUER, audience=AUDIENCE, claims=RATED) for a in ALGORITHMS)
    return Project(id="game", keys=keys, policies=(DUEL,), **fields)


def resolve(credential: str, project: str | None = None, *extra: Project) -> Any:
    directory = ProjectDirectory([game(), *extra])
    return resolve_hello(
        directory, project, credential, require_declared=False, now_ms=NOW_MS, limits=Limits()
    )


def reason_of(credential: str, project: str | None = None, *extra: Project) -> str:
    with pytest.raises(MatchmakerError) as caught:
        resolve(credential, project, *extra)
    assert caught.value.code == "auth.invalid_credential"
    assert credential not in str(caught.value)  # the token is never echoed
    reason: str = (caught.value.details or {})["reason"]
    return reason


def token(algorithm: str = "EdDSA", **claims: Any) -> str:
    fields = {"iss": ISSUER, "aud": AUDIENCE, "now": NOW, **claims}
    return signer(algorithm).token(**fields)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_valid_token_binds_its_project_player_and_trusted_attributes(algorithm: str) -> None:
    project, identity = resolve(token(algorithm, sub="ana", rating=1500, region="eu", x=1))
    assert project.id == "game"
    assert identity.player_id == "ana"
    assert identity.attributes == {"rating": 1500, "region": "eu"}  # only mapped claims
    assert identity.trusted == {"rating", "region"}


def test_a_mapped_claim_the_token_lacks_is_still_reserved() -> None:
    _, identity = resolve(token(rating=1200))
    assert identity.attributes == {"rating": 1200}
    assert identity.trusted == {"rating", "region"}


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"exp": NOW - LEEWAY_S - 1}, "expired"),
        ({"nbf": NOW + LEEWAY_S + 60}, "not_yet_valid"),
        ({"aud": "another-game"}, "wrong_audience"),
        ({"aud": None}, "wrong_audience"),
        ({"sub": None}, "missing_claim"),
        ({"exp": None}, "missing_claim"),
        ({"rating": {"elo": 1500}}, "bad_claim"),
        ({"rating": "x" * 257}, "bad_claim"),
        ({"exp": "tomorrow"}, "bad_claim"),
        ({"exp": float("nan")}, "bad_claim"),
        ({"nbf": "soon"}, "bad_claim"),
        ({"nbf": float("nan")}, "bad_claim"),
        ({"sub": "a\nb\u0000"}, "bad_claim"),
        ({"sub": "a" * 129}, "bad_claim"),
        ({"sub": 42}, "bad_claim"),
        ({"jti": 42, "iat": "now"}, None),
        ({"rating": 10**40}, "bad_claim"),
        ({"rating": -(2**53)}, "bad_claim"),
        ({"rating": float("inf")}, "bad_claim"),
        ({"rating": float("nan")}, "bad_claim"),
    ],
)
def test_a_token_failing_a_check_is_refused_with_its_reason(
    claims: dict[str, Any], reason: str | None
) -> None:
    """A claim is held to the rules a client's own value obeys (the name rule for ``sub``,
    the attribute rule for a mapped claim), and no library's exception name is told."""
    if reason is None:  # claims this server does not read are ignored, whatever they hold
        resolve(token(**claims), "game")
        return
    with pytest.raises(MatchmakerError) as caught:
        resolve(token(**claims), "game")
    assert (caught.value.details or {}).get("reason") == reason
    assert "Error" not in str(caught.value)


def test_the_largest_integers_a_client_may_send_are_trusted_attributes_too() -> None:
    _, identity = resolve(token(rating=2**53 - 1, region=-(2**53 - 1)))
    assert identity.attributes == {"rating": 2**53 - 1, "region": -(2**53 - 1)}


def test_clock_skew_within_the_leeway_is_tolerated() -> None:
    resolve(token(exp=NOW - LEEWAY_S + 5))
    resolve(token(nbf=NOW + LEEWAY_S - 5))


def test_a_token_from_another_issuer_for_the_named_project_is_wrong_issuer() -> None:
    assert reason_of(token(iss="https://evil.example"), "game") == "wrong_issuer"
    assert reason_of(token(iss=None), "game") == "wrong_issuer"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_token_signed_by_another_key_is_a_bad_signature(algorithm: Any) -> None:
    forged = signer(algorithm, 1).token(iss=ISSUER, aud=AUDIENCE, now=NOW)
    assert reason_of(forged, "game") == "bad_signature"


def test_the_project_comes_from_hello_or_from_the_one_project_trusting_the_issuer() -> None:
    twin = Project(id="twin", keys=(signer("ES256").key(issuer=ISSUER),))
    assert reason_of(token(), None, twin) == "ambiguous_issuer"
    project, _ = resolve(token(), "game", twin)
    assert project.id == "game"
    assert reason_of(token(iss="https://nobody.example")) == "unknown_issuer"
    assert reason_of(token(), "nothing-here") == "unknown_project"
    assert reason_of("a.b.c") == "malformed"


def test_a_shared_secret_shaped_like_a_token_still_binds_by_secret() -> None:
    dotted = Project(id="dotted", keys=(ProjectKey(type="shared-secret", secret="x.y.z"),))
    project, identity = resolve("x.y.z", None, dotted)
    assert (project.id, identity) == ("dotted", None)


# -- through a Conversation -------------------------------------------------------------------


def talk(core: Matchmaker, directory: ProjectDirectory) -> Conversation:
    return Conversation(core, directory, require_declared=False, now_ms=NOW_MS)


def refusal(effects: list[Effect]) -> MatchmakerError:
    """The error of the refusal that comes first in ``effects``."""
    assert isinstance(effects[0], Refuse), effects
    return effects[0].error


def hello(conversation: Conversation, **fields: Any) -> Welcome:
    (effect, *_) = conversation.receive(Greet(1, **fields), "h", NOW_MS)
    assert isinstance(effect, ReplyWith), effect
    assert isinstance(effect.answer, Welcome), effect.answer
    return effect.answer


def test_trusted_attributes_are_the_clients_and_cannot_be_sent() -> None:
    core, directory = Matchmaker(Limits(), node="t"), ProjectDirectory([game()])
    refused = talk(core, directory).receive(
        Greet(1, credential=token(rating=1500), attributes={"rating": 3000}), "h", NOW_MS
    )
    assert refusal(refused).details == {"attribute": "rating", "reason": "trusted"}
    conversation = talk(core, directory)
    welcome = hello(conversation, credential=token(rating=1500), attributes={"mode": "ranked"})
    assert welcome.player_id == "player-1"
    assert conversation.client is not None
    assert conversation.client.attributes == {"mode": "ranked", "rating": 1500}


def test_max_sessions_per_client_counts_a_players_sessions_over_its_connections() -> None:
    core, directory = (
        Matchmaker(Limits(max_sessions_per_client=2), node="t"),
        ProjectDirectory([game()]),
    )
    first, second = talk(core, directory), talk(core, directory)
    hello(first, credential=token(sub="ana"))
    hello(second, credential=token(sub="ana"))
    other = talk(core, directory)
    hello(other, credential=token(sub="bo"))
    for room, conversation in (("r1", first), ("r2", second)):
        (reply, *_) = conversation.receive(JoinSession(room, create=True), "j", NOW_MS)
        assert isinstance(reply, ReplyWith)
    assert (
        refusal(first.receive(JoinSession("r3", create=True), "j", NOW_MS)).code == "session.limit"
    )
    assert refusal(second.receive(EnterPool(), "e", NOW_MS)).code == "session.limit"
    (reply, *_) = other.receive(JoinSession("r1"), "j", NOW_MS)  # another player is not counted
    assert isinstance(reply, ReplyWith)


def test_session_members_show_their_player_id() -> None:
    core, directory = Matchmaker(Limits(), node="t"), ProjectDirectory([game()])
    ana, guest = talk(core, directory), talk(core, directory)
    hello(ana, credential=token(sub="ana"))
    hello(guest, credential=token(sub="bo"))
    ana.receive(EnterPool(), "e", NOW_MS)
    _, *deliveries = guest.receive(EnterPool(), "e", NOW_MS)
    created = [event for _, event in deliveries if isinstance(event, SessionFormed)]  # type: ignore[misc]
    assert {(m.client_id, m.player_id) for m in created[0].members} == {
        (ana.client.client_id, "ana"),  # type: ignore[union-attr]
        (guest.client.client_id, "bo"),  # type: ignore[union-attr]
    }


def test_only_the_same_player_resumes_its_client() -> None:
    core, directory = Matchmaker(Limits(), node="t"), ProjectDirectory([game()])
    first = talk(core, directory)
    welcome = hello(first, credential=token(sub="ana"))
    first.disconnect(NOW_MS, resumable=True)
    resume = ResumeFrom(welcome.resume_token)
    intruder = talk(core, directory).receive(
        Greet(1, credential=token(sub="bo"), resume=resume), "h", NOW_MS
    )
    assert refusal(intruder).code == "resume.expired"
    back = hello(talk(core, directory), credential=token(sub="ana"), resume=resume)
    assert (back.client_id, back.player_id, back.resumed) == (welcome.client_id, "ana", True)


def test_a_resume_holds_an_expired_token_to_every_check_but_its_exp() -> None:
    """The resume token proves the connection, so a token that expired since ``hello`` still
    resumes (and becomes the client's credential); a bad signature, or another player,
    does not."""
    core, directory = Matchmaker(Limits(), node="t"), ProjectDirectory([game()])
    first = talk(core, directory)
    welcome = hello(first, credential=token(sub="ana"))
    first.disconnect(NOW_MS, resumable=True)
    resume = ResumeFrom(welcome.resume_token)
    expired = NOW - LEEWAY_S - 3600
    forged = signer("EdDSA", 1).token(iss=ISSUER, aud=AUDIENCE, now=NOW, sub="ana", exp=expired)
    refused = talk(core, directory).receive(Greet(1, credential=forged, resume=resume), "h", NOW_MS)
    assert refusal(refused).details == {"reason": "bad_signature"}
    other = talk(core, directory).receive(
        Greet(1, credential=token(sub="bo", exp=expired), resume=resume), "h", NOW_MS
    )
    assert refusal(other).code == "resume.expired"
    late = token(sub="ana", exp=expired)
    back = hello(talk(core, directory), credential=late, resume=resume)
    assert (back.client_id, back.resumed) == (welcome.client_id, True)
    assert core.clients[back.client_id].credential == late
    fresh = talk(core, directory).receive(Greet(1, credential=late), "h", NOW_MS)
    assert refusal(fresh).details == {"reason": "expired"}  # no resume token: exp holds


def test_a_removed_key_forbids_the_next_operation_of_a_connected_client() -> None:
    core, directory = Matchmaker(Limits(), node="t"), ProjectDirectory([game()])
    conversation = talk(core, directory)
    hello(conversation, credential=token("ES256"))
    (reply, *_) = conversation.receive(JoinSession("r", create=True), "j", NOW_MS)
    assert isinstance(reply, ReplyWith)
    kept = tuple(k for k in game().keys if k.algorithm != "ES256")
    directory.put(Project(id="game", keys=kept, policies=(DUEL,)))
    error = refusal(conversation.receive(EnterPool(), "e", NOW_MS))
    assert (error.code, error.details) == (
        "auth.invalid_credential",
        {"project": "game", "reason": "revoked"},
    )


def test_the_directory_indexes_projects_by_issuer() -> None:
    directory = ProjectDirectory([game()])
    assert directory.projects_for_issuer(ISSUER) == ["game"]
    directory.put(Project(id="game"))
    assert directory.projects_for_issuer(ISSUER) == []
