"""``matchmaker admin apply``: check a whole plan with the server, then carry it out.

Every step is first sent with ``?dryRun=true``, so the server's own
validation (every rule, the store's conflicts included) judges the whole file
before anything is written: a file with one bad Project changes nothing, and
``--dry-run`` is exactly this check. A write that still fails afterwards (a
concurrent change) stops the run, and the outcome says what was applied, which
Project failed, and what was not applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from matchmaker.adminclient.client import AdminClient
from matchmaker.adminclient.plan import Plan, PlanStep
from matchmaker.errors import MatchmakerError
from mtcommon import CodedError

__all__ = ["Applied", "carry_out", "check"]


@dataclass(slots=True)
class Applied:
    """What a run did: the steps applied, and the one that failed with its error."""

    applied: list[PlanStep] = field(default_factory=list)
    failed: PlanStep | None = None
    error: CodedError | None = None
    not_applied: list[PlanStep] = field(default_factory=list)


def check(client: AdminClient, plan: Plan, where: Mapping[str, str]) -> None:
    """Dry-run every step on the server; the first refusal is raised naming its Project.

    ``where`` names each Project's place in the file (``projects[2]``).
    """
    stand_ins = plan.stand_ins()
    for change in plan.changes:
        try:
            _send(client, change, stand_ins, dry_run=True)
        except CodedError as exc:
            raise _naming(change, where, exc, "nothing was changed") from None


def carry_out(client: AdminClient, plan: Plan, where: Mapping[str, str]) -> Applied:
    """Run the steps in order, stopping at the first that fails."""
    outcome = Applied()
    for i, change in enumerate(plan.changes):
        try:
            _send(client, change, {}, dry_run=False)
        except CodedError as exc:
            outcome.failed = change
            outcome.error = _naming(change, where, exc, "the steps before it were applied")
            outcome.not_applied = [c for c in plan.changes[i:] if c.action != "unchanged"]
            return outcome
        outcome.applied.append(change)
    return outcome


def _send(
    client: AdminClient, change: PlanStep, stand_ins: Mapping[str, str], *, dry_run: bool
) -> None:
    # If-Match: the ETag the plan was made from (or the last write's), so a Project
    # someone else changed meanwhile is not overwritten (project.conflict).
    etag = client.etags.get(change.project_id)
    if change.action == "delete":
        client.delete(change.project_id, if_match=etag, dry_run=dry_run)
    elif change.body is not None:
        body = _standing_in(change.body, stand_ins)
        if change.action == "create":
            client.create(body, dry_run=dry_run)
        else:
            client.patch(change.project_id, body, if_match=etag, dry_run=dry_run)


def _standing_in(body: dict[str, Any], stand_ins: Mapping[str, str]) -> dict[str, Any]:
    if "keys" not in body or not stand_ins:
        return body
    keys = [
        {**k, "secret": stand_ins.get(k["secret"], k["secret"])} if "secret" in k else k
        for k in body["keys"]
    ]
    return {**body, "keys": keys}


def _naming(
    change: PlanStep, where: Mapping[str, str], exc: CodedError, consequence: str
) -> MatchmakerError:
    place = where.get(change.project_id)
    project = f"{change.project_id!r}" + (f" ({place})" if place else "")
    step = {"delete": "deleting", "create": "creating"}.get(change.action, "patching")
    return MatchmakerError(
        f"{step} Project {project} was refused: {exc.message}; {consequence}",
        code=exc.code,
        details=exc.details,
    )
