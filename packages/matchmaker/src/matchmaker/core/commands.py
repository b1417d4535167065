"""What a client asks of the core, as plain values decoded from the wire by the shell.

The data plane's wire module (:mod:`matchmaker.data.protocol`) validates frames
and converts each request into one of these; the core never sees JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matchmaker.model import FilterValue

__all__ = [
    "AttachDelegate",
    "CancelProposal",
    "CreateProposal",
    "EnterPool",
    "FormGroups",
    "ListPool",
    "MakeClaim",
    "ModeCommand",
    "Pick",
    "RespondProposal",
    "WatchPool",
]


@dataclass(frozen=True, slots=True)
class EnterPool:
    """``pool.enter``: a policy, an ad-hoc pool, or neither (the default policy)."""

    policy: str | None = None
    pool: str | None = None
    create: bool = False
    mode: str | None = None
    group_size: int | None = None
    filter: dict[str, FilterValue] | None = None
    ttl_ms: int | None = None
    public: dict[str, Any] | None = None
    listed: bool = True


# -- pool-mode commands (claim, mutual, propose, delegated) ---------------------------------


@dataclass(frozen=True, slots=True)
class ListPool:
    """``pool.list``: a page of the entries listed in a claim pool, oldest first."""

    pool: str
    cursor: str | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class WatchPool:
    """``pool.watch``: start (or, with ``watch: false``, stop) listing events for a pool."""

    pool: str
    watch: bool = True


@dataclass(frozen=True, slots=True)
class MakeClaim:
    """``claim.make``: take ``targets`` (client ids) from the listing into one session."""

    pool: str
    targets: list[str]


@dataclass(frozen=True, slots=True)
class Pick:
    """``pick.add`` (``add``) or ``pick.remove``: a private pick of ``target`` in a mutual pool."""

    pool: str
    target: str
    add: bool = True


@dataclass(frozen=True, slots=True)
class CreateProposal:
    """``proposal.create``: propose a group of ``members`` (client ids, not the proposer)."""

    pool: str
    members: list[str]
    ttl_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RespondProposal:
    """``proposal.respond``: accept or decline a proposal addressed to this client."""

    proposal_id: str
    accept: bool


@dataclass(frozen=True, slots=True)
class CancelProposal:
    """``proposal.cancel``: the proposer withdraws an open proposal."""

    proposal_id: str


@dataclass(frozen=True, slots=True)
class AttachDelegate:
    """``delegate.attach``: become (one of) the delegate(s) that form a pool's groups."""

    pool: str


@dataclass(frozen=True, slots=True)
class FormGroups:
    """``delegate.form``: groups of entry ids, each validated and formed atomically."""

    pool: str
    groups: list[list[str]]


ModeCommand = (
    ListPool
    | WatchPool
    | MakeClaim
    | Pick
    | CreateProposal
    | RespondProposal
    | CancelProposal
    | AttachDelegate
    | FormGroups
)
