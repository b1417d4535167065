"""The roster's decisions (sans I/O): who is live after each look at the registry, and
what a Redis that came back (restarted empty, or answering again) changes."""

from __future__ import annotations

from matchmaker.cluster.membership import MEMBER_TTL_MS, Change, Roster

T = 1_000_000
EPOCH, NEW_EPOCH = b"e1", b"e2"


def _joined(roster: Roster, *members: str) -> None:
    roster.look(members, members, EPOCH, T)
    assert roster.live == frozenset(members)


def test_a_member_whose_key_expired_is_dead_and_purged() -> None:
    roster = Roster("a")
    _joined(roster, "a", "b")
    change = roster.look(["a", "b"], ["a"], EPOCH, T + 1000)
    assert change == Change(frozenset(), frozenset({"b"}), frozenset({"b"}))
    assert roster.live == {"a"}


def test_a_registry_emptied_by_a_restart_gives_the_missing_members_the_member_ttl() -> None:
    """Redis came back without the set: ``b`` has not beaten yet, so it is not dead
    until it has not beaten for the whole TTL from the moment the new epoch was seen."""
    roster = Roster("a")
    _joined(roster, "a", "b")
    back = T + 5000
    change = roster.look(["a"], ["a"], NEW_EPOCH, back)
    assert change == Change(frozenset(), frozenset(), frozenset())
    assert roster.live == {"a", "b"}
    assert not roster.look(["a"], ["a"], NEW_EPOCH, back + MEMBER_TTL_MS - 1).died
    # b beats again: nothing changes for the routing.
    assert roster.look(["a", "b"], ["a", "b"], NEW_EPOCH, back + 1000) == Change(
        frozenset(), frozenset(), frozenset()
    )
    assert roster.look(["a", "b"], ["a"], NEW_EPOCH, back + MEMBER_TTL_MS).died == {"b"}


def test_a_member_that_never_beats_after_the_restart_is_dead_at_the_end_of_the_ttl() -> None:
    roster = Roster("a")
    _joined(roster, "a", "b", "c")
    back = T + 5000
    roster.look(["a", "c"], ["a", "c"], NEW_EPOCH, back)
    assert roster.live == {"a", "b", "c"}
    change = roster.look(["a", "c"], ["a", "c"], NEW_EPOCH, back + MEMBER_TTL_MS)
    assert change.died == {"b"}
    assert roster.live == {"a", "c"}


def test_redis_answering_again_with_keys_expired_is_a_return_too() -> None:
    """Redis paused past the TTL (keys expired, epoch kept): this member's failed looks
    mark an outage, and the members listed without a key are neither dead nor purged."""
    roster = Roster("a")
    _joined(roster, "a", "b")
    roster.unreachable()
    back = T + 10_000
    change = roster.look(["a", "b"], ["a"], EPOCH, back)
    assert change == Change(frozenset(), frozenset(), frozenset())
    assert roster.live == {"a", "b"}
    assert roster.look(["a", "b"], ["a"], EPOCH, back + MEMBER_TTL_MS).purge == {"b"}


def test_a_newcomer_seen_during_the_wait_joins_and_is_not_kept_when_it_stops() -> None:
    roster = Roster("a")
    _joined(roster, "a")
    back = T + 1000
    assert roster.look(["a", "n"], ["a", "n"], NEW_EPOCH, back).joined == {"n"}
    # Kept: it was live when it went missing, within the TTL after the return.
    assert "n" in roster.live
    assert roster.look(["a"], ["a"], NEW_EPOCH, back + 500).died == frozenset()
    assert roster.look(["a"], ["a"], NEW_EPOCH, back + MEMBER_TTL_MS).died == {"n"}


def test_the_first_look_sets_the_epoch_without_a_wait() -> None:
    roster = Roster("a")
    roster.look(["a", "b"], ["a"], EPOCH, T)
    assert roster.live == {"a"}
