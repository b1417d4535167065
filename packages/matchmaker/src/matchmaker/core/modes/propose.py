"""The ``propose`` mode: one client names a whole group, each named member must accept.

``proposal.create {pool, members}`` names ``groupSize - 1`` other clients waiting
in the proposer's bucket; each gets ``proposal.received`` and answers with
``proposal.respond``. When the last one accepts, the group forms at once. A
decline, the proposer's ``proposal.cancel``, the deadline, or any participant
leaving the pool (``left``) or being matched elsewhere (``matched``) ends it with
``proposal.closed {reason}`` to the others; everyone stays in the pool. Open
proposals per proposer and unanswered ones per member are bounded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from matchmaker.core.commands import CancelProposal, CreateProposal, ModeCommand, RespondProposal
from matchmaker.core.events import (
    Delivery,
    ModeAnswer,
    ProposalClosed,
    ProposalReceived,
    ProposalUpdated,
    PublicMember,
)
from matchmaker.core.modes.strategy import ModeHost, ModeStrategy, wrong_mode
from matchmaker.core.state import ClientState, Pool, PoolEntry
from matchmaker.errors import MatchmakerError

__all__ = ["Proposal", "ProposalAnswered", "ProposalMade", "ProposeMode"]


@dataclass(slots=True, eq=False)
class Proposal:
    """An open proposal: who made it, whom it names, who accepted so far."""

    proposal_id: str
    proposer: str
    members: list[str]
    expires_at: int
    accepted: set[str] = field(default_factory=set)

    def participants(self) -> list[str]:
        return [self.proposer, *self.members]

    def pending(self) -> list[str]:
        return [m for m in self.members if m not in self.accepted]


@dataclass(frozen=True, slots=True)
class ProposalMade(ModeAnswer):
    """The ``proposal.create`` reply."""

    proposal_id: str
    expires_at: int


@dataclass(frozen=True, slots=True)
class ProposalAnswered(ModeAnswer):
    """The ``proposal.respond`` / ``proposal.cancel`` reply: ``state`` is ``open`` (waiting
    for others), ``formed`` (this answer completed the group) or ``closed``."""

    proposal_id: str
    state: str
    session_id: str | None = None


class ProposeMode(ModeStrategy):
    """The open proposals of one propose pool."""

    name = "propose"

    def __init__(self, pool: Pool, host: ModeHost) -> None:
        super().__init__(pool, host)
        self.proposals: dict[str, Proposal] = {}
        self.by_client: dict[str, set[str]] = {}  # participant -> proposal ids

    def owns_proposal(self, proposal_id: str) -> bool:
        return proposal_id in self.proposals

    def leaving(self, entry: PoolEntry, reason: str, out: list[Delivery]) -> None:
        me = entry.client.client_id
        why = "matched" if reason == "matched" else "left"
        for proposal_id in list(self.by_client.get(me, ())):
            self._close(self.proposals[proposal_id], why, me, out)

    def timer(self, key: str, now_ms: int, out: list[Delivery]) -> None:
        proposal = self.proposals.get(key)
        if proposal is not None:
            self._close(proposal, "timeout", None, out)

    def command(
        self,
        client: ClientState,
        entry: PoolEntry | None,
        command: ModeCommand,
        now_ms: int,
        out: list[Delivery],
    ) -> ModeAnswer:
        match command:
            case CreateProposal():
                assert entry is not None
                return self._create(entry, command, now_ms, out)
            case RespondProposal():
                return self._respond(client.client_id, command, out)
            case CancelProposal():
                proposal = self._find(command.proposal_id, client.client_id, proposer=True)
                self._close(proposal, "cancelled", client.client_id, out)
                return ProposalAnswered(proposal.proposal_id, "closed")
        raise wrong_mode(self.pool)

    def _create(
        self, entry: PoolEntry, command: CreateProposal, now_ms: int, out: list[Delivery]
    ) -> ProposalMade:
        limits = self.host.limits
        me = entry.client.client_id
        size = self.pool.spec.group_size
        members = command.members
        if len(members) != size - 1 or len(set(members)) != len(members) or me in members:
            raise MatchmakerError(
                f"name exactly {size - 1} distinct other clients",
                code="proposal.invalid",
                details={"expected": size - 1},
            )
        if self._count(me, proposer=True) >= limits.max_open_proposals:
            raise MatchmakerError(
                f"at most {limits.max_open_proposals} open proposals per client",
                code="proposal.limit",
                details={"limit": limits.max_open_proposals},
            )
        entries: list[PoolEntry] = []
        missing: list[str] = []
        busy: list[str] = []
        for member in members:
            other = self.host.entry_of(member, self.pool)
            if other is None or other.bucket != entry.bucket:
                missing.append(member)
            elif self._count(member, proposer=False) >= limits.max_pending_proposals:
                busy.append(member)
            else:
                entries.append(other)
        if missing:
            raise MatchmakerError(
                "some members are not waiting in your bucket of this pool",
                code="proposal.unavailable",
                details={"missing": missing},
            )
        if busy:
            raise MatchmakerError(
                f"some members already have {limits.max_pending_proposals} unanswered proposals",
                code="proposal.limit",
                details={"busy": busy, "limit": limits.max_pending_proposals},
            )
        ttl = min(command.ttl_ms or limits.proposal_ttl_ms, limits.proposal_ttl_ms)
        proposal = Proposal(self.host.new_id("p"), me, list(members), now_ms + ttl)
        self.proposals[proposal.proposal_id] = proposal
        for cid in proposal.participants():
            self.by_client.setdefault(cid, set()).add(proposal.proposal_id)
        self.host.schedule(proposal.expires_at, self.pool, proposal.proposal_id)
        infos = [
            PublicMember(e.client.client_id, e.public, e.client.player_id)
            for e in (entry, *entries)
        ]
        received = ProposalReceived(
            proposal.proposal_id, self.pool.name, me, infos, proposal.expires_at
        )
        out.append((list(members), received))
        return ProposalMade(proposal.proposal_id, proposal.expires_at)

    def _respond(self, me: str, command: RespondProposal, out: list[Delivery]) -> ProposalAnswered:
        proposal = self._find(command.proposal_id, me, proposer=False)
        if not command.accept:
            self._close(proposal, "declined", me, out)
            return ProposalAnswered(proposal.proposal_id, "closed")
        proposal.accepted.add(me)
        pending = proposal.pending()
        if pending:
            others = [cid for cid in proposal.participants() if cid != me]
            out.append((others, ProposalUpdated(proposal.proposal_id, me, True, pending)))
            return ProposalAnswered(proposal.proposal_id, "open")
        self._forget(proposal)
        group = [self.host.entry_of(cid, self.pool) for cid in proposal.participants()]
        # Leaving the pool closes every proposal its client is in, so all are still here.
        entries = [e for e in group if e is not None]
        assert len(entries) == len(group)
        session_id = self.host.form(entries, out)
        return ProposalAnswered(proposal.proposal_id, "formed", session_id)

    def _find(self, proposal_id: str, me: str, *, proposer: bool) -> Proposal:
        proposal = self.proposals.get(proposal_id)
        if (
            proposal is None
            or (proposal.proposer == me) != proposer
            or (not proposer and me not in proposal.members)
        ):
            raise MatchmakerError(
                "no such open proposal for you to answer"
                if not proposer
                else "no such open proposal of yours",
                code="proposal.not_found",
                details={"proposal_id": proposal_id},
            )
        return proposal

    def _count(self, client_id: str, *, proposer: bool) -> int:
        """Open proposals ``client_id`` made (``proposer``) or has not answered yet."""
        ids = self.by_client.get(client_id, ())
        if proposer:
            return sum(1 for pid in ids if self.proposals[pid].proposer == client_id)
        return sum(1 for pid in ids if client_id in self.proposals[pid].pending())

    def _close(
        self,
        proposal: Proposal,
        reason: str,
        by: str | None,
        out: list[Delivery],
    ) -> None:
        """End ``proposal``; everyone in it but ``by`` (who caused it) is told."""
        self._forget(proposal)
        recipients = [cid for cid in proposal.participants() if cid != by]
        out.append((recipients, ProposalClosed(proposal.proposal_id, reason, by)))

    def _forget(self, proposal: Proposal) -> None:
        del self.proposals[proposal.proposal_id]
        for cid in proposal.participants():
            ids = self.by_client[cid]
            ids.discard(proposal.proposal_id)
            if not ids:
                del self.by_client[cid]
