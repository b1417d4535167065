"""The checks a request's own fields must pass before the core acts on it: a client's
attributes at ``hello`` and an ad-hoc pool's rules at ``pool.enter``."""

from __future__ import annotations

from matchmaker.config import Limits
from matchmaker.core.admission.tokens import Identity
from matchmaker.core.commands import EnterPool
from matchmaker.errors import MatchmakerError
from matchmaker.model import FilterValue
from matchmaker.rules.attributes import value_problem
from matchmaker.rules.filters import filter_problem, group_problem
from matchmaker.rules.teams import team_problem

__all__ = ["check_attributes", "check_pool"]


def check_attributes(
    sent: dict[str, FilterValue], identity: Identity | None, limits: Limits
) -> dict[str, FilterValue]:
    """The client's attributes: those it sent, bounded, plus the trusted ones its token
    carries. Sending a name the token's key fills is refused, so a client never believes
    a value of its own was used."""
    trusted = {} if identity is None else identity.attributes
    claimed = sorted(set(sent) & identity.trusted) if identity is not None else []
    if claimed:
        raise MatchmakerError(
            f"attribute {claimed[0]!r} comes from the credential and cannot be sent",
            code="protocol.bad_request",
            details={"attribute": claimed[0], "reason": "trusted"},
        )
    merged = {**sent, **trusted}
    if len(merged) > limits.max_attributes:
        raise MatchmakerError(
            f"at most {limits.max_attributes} attributes",
            code="protocol.bad_request",
            details={"limit": limits.max_attributes},
        )
    for key, value in sent.items():
        problem = value_problem(value, limits)
        if problem is not None:
            details: dict[str, object] = {"attribute": key}
            if problem.limit is not None:
                details["limit"] = problem.limit
            raise MatchmakerError(
                f"attribute {key!r} {problem.rule}", code="protocol.bad_request", details=details
            )
    return merged


def check_pool(command: EnterPool, limits: Limits) -> None:
    """An ad-hoc pool's filter, group sizes, teams, balance and regions obey the rules
    policies obey."""
    sizes = (command.min_group_size, command.fill_timeout_ms)
    problem = group_problem(command.mode, command.group_size, *sizes) or team_problem(
        command.mode,
        command.group_size,
        command.min_group_size,
        teams=command.teams,
        balance=command.balance,
        regions=command.regions,
    )
    if problem is not None:
        assert problem.attribute is not None
        raise MatchmakerError(
            problem.rule, code="protocol.bad_request", details={"field": problem.attribute}
        )
    if command.filter is None:
        return
    problem = filter_problem(command.filter, command.mode, limits)
    if problem is not None:
        details: dict[str, object] = {"field": "filter"}
        if problem.attribute is not None:
            details["attribute"] = problem.attribute
        if problem.limit is not None:
            details["limit"] = problem.limit
        raise MatchmakerError(problem.rule, code="protocol.bad_request", details=details)
