"""Pools: which pool a ``pool.enter`` means, with which parameters, and who it admits.

A pool's parameters are a :class:`PoolSpec`. A policy pool takes its spec from
the policy at the time of entry; an ad-hoc pool is created with a spec by the
first ``create: true`` and joined by name afterwards. Live pools are keyed by
spec, so editing a policy never changes a pool that has entries: new entries
go to a pool with the new spec, old ones drain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from matchmaker.core.commands import EnterPool
from matchmaker.errors import MatchmakerError
from matchmaker.model import (
    SELF,
    Balance,
    FilterTerm,
    FilterValue,
    MatchmakingPolicy,
    Project,
    RangeRule,
    Regions,
    Team,
)

__all__ = ["Bucket", "Lineup", "PoolKey", "PoolSpec", "resolve_pool"]

# One (kind, value) pair per ``@self`` key: the kind keeps ``true`` and ``1`` apart,
# which Python's ``True == 1`` (and equal hashes) would otherwise put in one bucket.
Bucket = tuple[tuple[str, FilterValue], ...]
# ("policy", project, name, spec) or ("adhoc", project, name)
PoolKey = tuple[object, ...]
# A pool's teams, balance and regions, as a policy or a ``pool.enter`` names them.
Lineup = tuple[Sequence[Team] | None, Balance | None, Regions | None]


@dataclass(frozen=True, slots=True)
class PoolSpec:
    """The parameters of a pool: mode, group sizes and filter (sorted, hashable).

    ``group_size`` is the most members a group has; ``min_group_size`` (``None``:
    the same) the fewest, once the oldest has waited ``fill_timeout_ms``. ``teams``
    (empty: none), ``balance`` and ``regions``: see :mod:`matchmaker.core.modes.teams`.
    """

    mode: str
    group_size: int
    filter: tuple[tuple[str, FilterTerm], ...] = ()
    min_group_size: int | None = None
    fill_timeout_ms: int | None = None
    teams: tuple[Team, ...] = ()
    balance: Balance | None = None
    regions: Regions | None = None

    @classmethod
    def of(
        cls,
        mode: str,
        group_size: int,
        filter: dict[str, FilterTerm] | None,
        min_group_size: int | None = None,
        fill_timeout_ms: int | None = None,
        *,
        line: Lineup | None = None,
    ) -> PoolSpec:
        items = tuple(sorted((filter or {}).items()))
        teams, balance, regions = line or (None, None, None)
        return cls(
            mode,
            group_size,
            items,
            min_group_size,
            fill_timeout_ms,
            tuple(teams or ()),
            balance,
            regions,
        )

    @classmethod
    def of_policy(cls, policy: MatchmakingPolicy) -> PoolSpec:
        """The spec of a policy's pool."""
        return cls.of(
            policy.mode,
            policy.group_size,
            policy.filter,
            policy.min_group_size,
            policy.fill_timeout_ms,
            line=(policy.teams, policy.balance, policy.regions),
        )

    @property
    def lineup(self) -> Lineup:
        """Its ``teams`` (``None``: none), ``balance`` and ``regions``, as :meth:`of` takes them."""
        return (self.teams or None, self.balance, self.regions)

    @property
    def largest_team(self) -> int:
        """The most members one team holds (``group_size`` without teams): what a party,
        which plays on one team, may count at most."""
        return max((team.size for team in self.teams), default=self.group_size)

    @property
    def smallest(self) -> int:
        """The fewest members a group may have (after the fill timeout)."""
        return self.group_size if self.min_group_size is None else self.min_group_size

    @property
    def range_rule(self) -> tuple[str, RangeRule] | None:
        """The filter's range term (at most one, see :mod:`matchmaker.rules.filters`), if any."""
        return next(((k, v) for k, v in self.filter if isinstance(v, RangeRule)), None)

    def bucket_for(self, attributes: dict[str, FilterValue]) -> Bucket:
        """Admit a client by its attributes and return its bucket.

        Raises ``pool.attribute_missing`` or ``pool.filter_mismatch``. A range term
        admits any number and picks no bucket: the mode matches it by distance.
        """
        bucket: list[tuple[str, FilterValue]] = []
        terms = self.filter
        if self.balance is not None and self.balance.attribute not in dict(terms):
            terms = (*terms, (self.balance.attribute, _NUMBER))
        for key, wanted in terms:
            if key not in attributes:
                raise MatchmakerError(
                    f"the pool filters on attribute {key!r}, which this client did not declare",
                    code="pool.attribute_missing",
                    details={"attribute": key},
                )
            value = attributes[key]
            if isinstance(wanted, RangeRule):
                if _kind(value) != "number":
                    raise MatchmakerError(
                        f"attribute {key!r} must be a number to enter this pool",
                        code="pool.filter_mismatch",
                        details={"attribute": key, "expected": "number", "actual": value},
                    )
            elif wanted == SELF:
                bucket.append((_kind(value), value))
            elif _kind(value) != _kind(wanted) or value != wanted:
                raise MatchmakerError(
                    f"attribute {key!r} must be {wanted!r} to enter this pool",
                    code="pool.filter_mismatch",
                    details={"attribute": key, "expected": wanted, "actual": value},
                )
        return tuple(bucket)


_NUMBER = RangeRule(0)  # a balanced attribute is a number, as a range rule's is


def _kind(value: FilterValue) -> str:
    """The JSON kind of an attribute value: booleans are not numbers, 1 and 1.0 are one number."""
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, int | float) else "string"


def resolve_pool(project: Project, request: EnterPool) -> tuple[str, PoolSpec | None, bool]:
    """``(pool name, spec, is_policy)`` for a ``pool.enter``, per the design's rules 1-3.

    ``spec`` is ``None`` for an ad-hoc pool joined by name without ``create``:
    the live pool's spec applies, and the caller raises ``pool.not_found`` when
    there is none.
    """
    overrides = any(
        value is not None
        for value in (
            request.mode,
            request.group_size,
            request.filter,
            request.min_group_size,
            request.fill_timeout_ms,
            request.teams,
            request.balance,
            request.regions,
        )
    )
    name = request.policy if request.policy is not None else request.pool
    if name is None:
        policy = project.default_policy()
        if policy is None:
            raise MatchmakerError(
                "name a policy or a pool: this Project has no default policy",
                code="pool.policy_required",
            )
    else:
        policy = project.policy(name)
    if policy is not None:
        if overrides:
            raise MatchmakerError(
                f"policy {policy.name!r} fixes mode, groupSize, filter and teams; do not send them",
                code="pool.conflict",
                details={"policy": policy.name},
            )
        return policy.name, PoolSpec.of_policy(policy), True
    assert name is not None
    if request.policy is not None:
        raise MatchmakerError(
            f"no policy named {name!r}", code="pool.policy_not_found", details={"policy": name}
        )
    if project.lockdown:
        if request.create:
            raise MatchmakerError(
                "this Project is locked down: ad-hoc pools cannot be created",
                code="project.lockdown",
            )
        raise MatchmakerError(
            f"no policy named {name!r} (the Project is locked down)",
            code="pool.policy_not_found",
            details={"policy": name},
        )
    if not request.create:
        return name, None, False
    if request.mode is None or request.group_size is None:
        raise MatchmakerError(
            "creating a pool needs mode and groupSize", code="protocol.bad_request"
        )
    spec = PoolSpec.of(
        request.mode,
        request.group_size,
        request.filter,
        request.min_group_size,
        request.fill_timeout_ms,
        line=(request.teams, request.balance, request.regions),
    )
    return name, spec, False
