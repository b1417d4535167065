"""The claim, mutual, propose and delegated modes of the core, driven directly (no server)."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.config import Limits
from matchmaker.core import Delivery, EnterPool, Matchmaker, events
from matchmaker.core.commands import (
    AttachDelegate,
    CancelProposal,
    CreateProposal,
    FormGroups,
    ListPool,
    MakeClaim,
    Pick,
    RespondProposal,
    WatchPool,
)
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, ProjectKey

POLICIES = (
    MatchmakingPolicy(name="lobby", mode="claim", group_size=3, filter={"region": "@self"}),
    MatchmakingPolicy(name="duo", mode="mutual", group_size=2),
    MatchmakingPolicy(name="quad", mode="mutual", group_size=4),
    MatchmakingPolicy(name="party", mode="propose", group_size=3),
    MatchmakingPolicy(name="ranked", mode="delegated", group_size=2, filter={"region": "@self"}),
    MatchmakingPolicy(name="duel", mode="auto", group_size=2),
)
DELEGATE_SECRET, PLAIN_SECRET = "d" * 16, "p" * 16
DELEGATE_KEY = ProjectKey(type="shared-secret", secret=DELEGATE_SECRET, scopes=("delegate",))
PLAIN_KEY = ProjectKey(type="shared-secret", secret=PLAIN_SECRET)
PROJECT = Project(id="p", policies=POLICIES, keys=(DELEGATE_KEY, PLAIN_KEY))


def new_core(**limits: Any) -> Matchmaker:
    return Matchmaker(Limits(**limits), node="t")


def connect(core: Matchmaker, credential: str = PLAIN_SECRET, **attributes: Any) -> str:
    return core.connect("p", credential, {"region": "eu", **attributes}).client_id


def enter(core: Matchmaker, client: str, policy: str, now: int = 0, **fields: Any) -> str:
    entered, _ = core.enter(client, PROJECT, EnterPool(policy=policy, **fields), now)
    return entered.entry_id


def run(core: Matchmaker, client: str, command: Any, now: int = 0) -> tuple[Any, list[Delivery]]:
    return core.command(client, PROJECT, command, now)


def kinds(out: list[Delivery]) -> list[tuple[str, list[str]]]:
    """``(event type, recipients)`` in order; session.created collapsed to its members."""
    seen: list[tuple[str, list[str]]] = []
    for recipients, event in out:
        kind = getattr(event, "KIND", type(event).__name__)
        seen.append((kind, sorted(recipients)))
    return seen


def created(out: list[Delivery]) -> list[set[str]]:
    """The member sets of the sessions formed, once each."""
    sessions: dict[str, set[str]] = {}
    for _, event in out:
        if isinstance(event, events.SessionFormed):
            sessions[event.session_id] = {m.client_id for m in event.members}
    return list(sessions.values())


def refused(code: str, call: Any, *args: Any) -> dict[str, Any]:
    with pytest.raises(MatchmakerError) as caught:
        call(*args)
    assert caught.value.code == code
    return caught.value.details or {}


# -- claim ----------------------------------------------------------------------------------


def test_claim_lists_its_bucket_and_claims_atomically() -> None:
    core = new_core()
    seeker = connect(core)
    a, b, c = connect(core), connect(core), connect(core)
    far = connect(core, region="us")
    enter(core, seeker, "lobby", listed=False)
    _, out = run(core, seeker, WatchPool("lobby"))
    for i, client in enumerate((a, b, c)):
        _, out = core.enter(client, PROJECT, EnterPool(policy="lobby", public={"n": i}), 10 * i)
        assert ("pool.listed", [seeker]) in kinds(out)
    enter(core, far, "lobby")
    page, _ = run(core, seeker, ListPool("lobby", limit=2), now=100)
    assert [e.client_id for e in page.entries] == [a, b]
    assert [e.waited_ms for e in page.entries] == [100, 90]
    page2, _ = run(core, seeker, ListPool("lobby", cursor=page.cursor), now=100)
    assert [e.client_id for e in page2.entries] == [c]
    assert page2.cursor is None
    # a target that is gone (or in another bucket, or a seeker): nobody moves
    core.leave_pool(c, "lobby")
    details = refused("claim.conflict", run, core, seeker, MakeClaim("lobby", [a, c]))
    assert details == {"missing": [c]}
    details = refused("claim.conflict", run, core, seeker, MakeClaim("lobby", [a, far]))
    assert details == {"missing": [far]}
    assert len(core.clients[a].entries) == len(core.clients[seeker].entries) == 1
    claimed, out = run(core, seeker, MakeClaim("lobby", [b, a]))
    assert created(out) == [{seeker, a, b}]
    assert core.sessions[claimed.session_id].pool == "lobby"
    assert ("pool.unlisted", [seeker]) not in kinds(out)  # the seeker itself left the pool


def test_claim_refuses_wrong_counts_and_self() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    enter(core, a, "lobby")
    enter(core, b, "lobby")
    for targets in ([b], [b, b], [a, b]):
        refused("claim.invalid", run, core, a, MakeClaim("lobby", targets))
    refused("claim.bad_cursor", run, core, a, ListPool("lobby", cursor="x"))
    refused("pool.not_found", run, core, a, MakeClaim("party", [b, b]))


def test_watchers_see_unlisted_with_a_reason() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    enter(core, a, "lobby")
    enter(core, b, "lobby")
    run(core, a, WatchPool("lobby"))
    _, out = core.leave_pool(b, "lobby")
    assert [(r, getattr(e, "reason", None)) for r, e in out] == [([a], "left")]
    run(core, a, WatchPool("lobby", watch=False))
    enter(core, b, "lobby")
    assert core.leave_pool(b, "lobby")[1] == []


# -- mutual ---------------------------------------------------------------------------------


def test_mutual_pair_forms_on_the_reciprocal_pick_only() -> None:
    core = new_core()
    a, b, c = connect(core), connect(core), connect(core)
    for client in (a, b, c):
        enter(core, client, "duo")
    picked, out = run(core, a, Pick("duo", b))
    assert picked.picks == [b]
    assert out == []
    run(core, c, Pick("duo", a))
    picked, out = run(core, b, Pick("duo", a))
    assert picked.session_id is not None
    assert created(out) == [{a, b}]
    assert core.clients[c].entries["duo"].live
    assert core.pools[core.clients[c].entries["duo"].pool.key].mode.picks == {}  # type: ignore[attr-defined]


def test_mutual_needs_a_complete_set_of_group_size() -> None:
    core = new_core()
    a, b, c, d = (connect(core) for _ in range(4))
    for client in (a, b, c, d):
        enter(core, client, "quad")
    everyone = [a, b, c, d]
    for picker in everyone:
        for target in everyone:
            if picker == target or (picker, target) == (d, c):
                continue
            _, out = run(core, picker, Pick("quad", target))
            assert out == []
    _, out = run(core, d, Pick("quad", c))
    assert created(out) == [set(everyone)]


def test_picks_vanish_with_the_entry_and_can_be_taken_back() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    enter(core, a, "duo")
    enter(core, b, "duo")
    run(core, a, Pick("duo", b))
    core.leave_pool(a, "duo")
    enter(core, a, "duo")
    _, out = run(core, b, Pick("duo", a))
    assert out == []  # a's old pick left with its entry
    picked, _ = run(core, b, Pick("duo", a, add=False))
    assert picked.picks == []
    _, out = run(core, a, Pick("duo", b))
    assert out == []
    refused("pick.invalid", run, core, a, Pick("duo", a))
    refused("pick.not_found", run, core, a, Pick("duo", "nobody"))


def test_pick_limit() -> None:
    core = new_core()
    a = connect(core)
    enter(core, a, "duo")
    others = [connect(core) for _ in range(33)]
    for other in others:
        enter(core, other, "duo")
    for other in others[:32]:
        run(core, a, Pick("duo", other))
    assert refused("pick.limit", run, core, a, Pick("duo", others[32])) == {"limit": 32}


# -- propose --------------------------------------------------------------------------------


def _party(core: Matchmaker) -> list[str]:
    clients = [connect(core) for _ in range(4)]
    for client in clients:
        enter(core, client, "party")
    return clients


def test_proposal_forms_when_all_accept() -> None:
    core = new_core()
    a, b, c, _ = _party(core)
    made, out = run(core, a, CreateProposal("party", [b, c]), now=0)
    assert kinds(out) == [("proposal.received", [b, c])]
    received = out[0][1]
    assert isinstance(received, events.ProposalReceived)
    assert [m.client_id for m in received.members] == [a, b, c]
    answered, out = run(core, b, RespondProposal(made.proposal_id, True))
    assert answered.state == "open"
    assert kinds(out) == [("proposal.updated", [a, c])]
    updated = out[0][1]
    assert isinstance(updated, events.ProposalUpdated)
    assert updated.pending == [c]
    answered, out = run(core, c, RespondProposal(made.proposal_id, True))
    assert answered.state == "formed"
    assert created(out) == [{a, b, c}]
    refused("proposal.not_found", run, core, b, RespondProposal(made.proposal_id, True))


@pytest.mark.parametrize("ending", ["declined", "cancelled", "timeout", "left", "matched"])
def test_proposal_closes_and_everyone_stays(ending: str) -> None:
    core = new_core(proposal_ttl_ms=1000)
    a, b, c, d = _party(core)
    made, _ = run(core, a, CreateProposal("party", [b, c]), now=0)
    pid = made.proposal_id
    if ending == "declined":
        _, out = run(core, b, RespondProposal(pid, False))
        by: str | None = b
    elif ending == "cancelled":
        _, out = run(core, a, CancelProposal(pid))
        by = a
    elif ending == "timeout":
        assert [e for e in core.expire(999) if isinstance(e[1], events.ProposalClosed)] == []
        out = core.expire(1000)
        by = None
    elif ending == "left":
        _, out = core.leave_pool(c, "party")
        by = c
    else:  # c and d are matched by another proposal
        other, _ = run(core, d, CreateProposal("party", [c, b]))
        run(core, c, RespondProposal(other.proposal_id, True))
        _, out = run(core, b, RespondProposal(other.proposal_id, True))
        by = c
    closed = [(sorted(r), e) for r, e in out if isinstance(e, events.ProposalClosed)]
    assert closed, out
    recipients, event = closed[0]
    assert (event.proposal_id, event.reason, event.client_id) == (pid, ending, by)
    assert recipients == sorted(x for x in (a, b, c) if x != by)
    if ending != "matched":
        assert all(core.clients[x].entries.get("party") for x in (a, b, d))
    refused("proposal.not_found", run, core, a, CancelProposal(pid))


def test_proposal_bounds_and_validation() -> None:
    core = new_core(max_open_proposals=1, max_pending_proposals=1)
    a, b, c, d = _party(core)
    refused("proposal.invalid", run, core, a, CreateProposal("party", [b]))
    refused("proposal.invalid", run, core, a, CreateProposal("party", [b, a]))
    details = refused("proposal.unavailable", run, core, a, CreateProposal("party", [b, "x"]))
    assert details == {"missing": ["x"]}
    run(core, a, CreateProposal("party", [b, c]))
    refused("proposal.limit", run, core, a, CreateProposal("party", [b, d]))
    details = refused("proposal.limit", run, core, d, CreateProposal("party", [b, a]))
    assert details["busy"] == [b]
    refused("proposal.not_found", run, core, a, RespondProposal("nope", True))


# -- delegated ------------------------------------------------------------------------------


def test_only_a_delegate_scoped_credential_attaches() -> None:
    core = new_core()
    plain = connect(core)
    refused("project.forbidden", run, core, plain, AttachDelegate("ranked"))
    delegate = connect(core, credential=DELEGATE_SECRET)
    refused("pool.wrong_mode", run, core, delegate, AttachDelegate("duel"))
    refused("pool.not_found", run, core, delegate, AttachDelegate("x"))
    refused("delegate.not_attached", run, core, delegate, FormGroups("ranked", []))


def test_delegate_snapshot_deltas_and_atomic_groups() -> None:
    core = new_core()
    a, b = connect(core, skill=10), connect(core, skill=20)
    ea = enter(core, a, "ranked")
    delegate = connect(core, credential=DELEGATE_SECRET)
    attached, out = run(core, delegate, AttachDelegate("ranked"))
    ((recipients, snapshot),) = out
    assert recipients == (delegate,)
    assert isinstance(snapshot, events.PoolSnapshot)
    assert snapshot.version == attached.version
    assert [(e.entry_id, e.attributes["skill"]) for e in snapshot.entries] == [(ea, 10)]
    eb = enter(core, b, "ranked")
    c = connect(core, region="us")
    ec = enter(core, c, "ranked")

    formed, out = run(
        core, delegate, FormGroups("ranked", [[ea, ec], [ea], [ea, eb], [eb, "gone"]])
    )
    results = formed.results
    assert [r.ok for r in results] == [False, False, True, False]
    assert results[0].error["code"] == "delegate.invalid_group"  # two regions
    assert results[1].error["code"] == "delegate.invalid_group"  # wrong size
    assert results[3].error == {
        "code": "delegate.stale",
        "message": "some entries are no longer waiting",
        "details": {"missing": [eb, "gone"]},
    }
    assert created(out) == [{a, b}]
    deltas = [e for _, e in out if isinstance(e, events.PoolDelta)]
    assert [d.removed for d in deltas] == [[ea], [eb]]
    assert [d.version for d in deltas] == [attached.version + 3, attached.version + 4]
    assert core.clients[c].entries["ranked"].live  # the refused group moved nobody


def test_no_delegate_notice_after_the_grace_and_the_pool_outlives_its_entries() -> None:
    core = new_core(delegate_grace_ms=100)
    a = connect(core)
    entry = enter(core, a, "ranked", now=0)
    assert core.expire(99) == []
    assert [(r, e) for r, e in core.expire(100)] == [((a,), events.PoolNoDelegate("ranked", entry))]
    assert core.expire(500) == []  # once per delegate-less spell
    delegate = connect(core, credential=DELEGATE_SECRET)
    run(core, delegate, AttachDelegate("ranked"), now=600)
    core.leave_pool(a, "ranked")
    assert any(p.name == "ranked" for p in core.pools.values())  # kept live for the delegate
    entry2 = enter(core, a, "ranked", now=700)
    assert core.expire(900) == []
    core.disconnect(delegate, 950)  # the grace runs from the time disconnect is given
    assert core.expire(1049) == []
    assert [e for _, e in core.expire(1050)] == [events.PoolNoDelegate("ranked", entry2)]
    core.leave_pool(a, "ranked")
    assert not any(p.name == "ranked" for p in core.pools.values())


def test_a_paused_entry_of_a_changed_policy_is_closed_not_resumed() -> None:
    core = new_core()
    a = connect(core)
    enter(core, a, "duo")
    core.suspend(a)
    edited = Project(id="p", policies=(MatchmakingPolicy(name="duo", mode="mutual", group_size=3),))
    out = core.close_changed_policies("p", edited)
    assert [type(e).__name__ for _, e in out] == ["EntryPoolClosed"]
    assert core.clients[a].entries == {}
    assert not any(p.name == "duo" for p in core.pools.values())
    assert core.resume(a, 0) == []
