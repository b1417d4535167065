"""Drive the real matching core over a trace on a simulated clock: the one module that
calls :mod:`matchmaker.core`.

The server's shell (:mod:`matchmaker.data.plane`) calls ``Matchmaker.enter`` as
requests arrive and ``Matchmaker.expire`` on a 250 ms tick; here the clock
jumps from one thing that can happen to the next (an arrival, a leave, the
core's next deadline: a window widening, a fill timeout, an entry's TTL), so
nothing sleeps and timers fire at their exact time. The core is called through
five ``Matchmaker`` methods only: ``connect``, ``enter``, ``expire``,
``leave_pool`` and ``next_due``; ``PoolSpec.of_policy(...).bucket_for`` checks
each arrival against the filter before the run.

At one instant the core's due timers run first, then the leaves, then the
arrival (as the server's tick would have run before the request). The trace
ends at its last arrival: entries still waiting then are unmatched.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from matchmaker.arrivals import Arrival, Trace
from matchmaker.config import Limits
from matchmaker.core import EnterPool, Matchmaker, PoolSpec
from matchmaker.core.events import Delivery, EntryExpired, SessionFormed
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project

__all__ = ["Group", "Outcome", "check_admitted", "replay"]

_PROJECT = "simulate"


@dataclass(frozen=True, slots=True)
class Group:
    """A session the policy formed: when, and which arrivals (indices into the trace)."""

    at_ms: int
    members: tuple[int, ...]


@dataclass(slots=True)
class Outcome:
    """What one policy did with a trace: the groups it formed, in order."""

    groups: list[Group] = field(default_factory=list)


def check_admitted(policy: MatchmakingPolicy, trace: Trace) -> None:
    """Raise the core's ``pool.attribute_missing`` / ``pool.filter_mismatch`` for the first
    arrival the policy's filter would refuse (``pool.latencies_required``: one without
    ``latencies`` under ``regions``), naming its line: checked before the run."""
    spec = PoolSpec.of_policy(policy)
    for arrival, line in zip(trace.arrivals, trace.lines, strict=True):
        try:
            spec.bucket_for(arrival.attributes)
            if spec.regions is not None and not arrival.latencies:
                raise MatchmakerError(
                    "the policy chooses a region by latency: the line has no latencies",
                    code="pool.latencies_required",
                )
        except MatchmakerError as exc:
            details = {**(exc.details or {}), "line": line, "policy": policy.name}
            raise MatchmakerError(
                f"arrivals line {line}: {exc.message}", code=exc.code, details=details
            ) from None


def replay(policy: MatchmakingPolicy, trace: Trace, limits: Limits) -> Outcome:
    """Every arrival of ``trace`` enters ``policy``'s pool of a fresh core, in time order."""
    return _Replay(policy, trace, limits).run()


class _Replay:
    """One run: the core, the simulated clock's pending leaves, and who is where."""

    def __init__(self, policy: MatchmakingPolicy, trace: Trace, limits: Limits) -> None:
        self.core = Matchmaker(limits, node="sim")
        self.policy = policy
        self.project = Project(id=_PROJECT, policies=(policy,))
        self.trace = trace
        self.index: dict[str, int] = {}  # client id -> arrival index
        self.waiting: dict[int, str] = {}  # arrival index -> client id, while it waits
        self.leaves: list[tuple[int, int]] = []  # (leave_ms, arrival index)
        self.outcome = Outcome()

    def run(self) -> Outcome:
        core = self.core
        arrivals = self.trace.arrivals
        for i, arrival in enumerate(arrivals):
            self._advance(arrival.at_ms)
            client = core.connect(_PROJECT, None, arrival.attributes)
            self.index[client.client_id] = i
            self.waiting[i] = client.client_id
            request = EnterPool(policy=self.policy.name, latencies=_latencies(arrival))
            _, out = core.enter(client.client_id, self.project, request, arrival.at_ms)
            self._seen(out, arrival.at_ms)
            if arrival.leave_ms is not None and i in self.waiting:
                heapq.heappush(self.leaves, (arrival.leave_ms, i))
        if arrivals:
            self._advance(arrivals[-1].at_ms)
        return self.outcome

    def _advance(self, until_ms: int) -> None:
        """Run every core deadline and leave due by ``until_ms``, in time order."""
        core, leaves = self.core, self.leaves
        while True:
            due = core.next_due()
            leave = leaves[0][0] if leaves else None
            if due is not None and due <= until_ms and (leave is None or due <= leave):
                self._seen(core.expire(due), due)
            elif leave is not None and leave <= until_ms:
                _, i = heapq.heappop(leaves)
                client_id = self.waiting.pop(i, None)
                if client_id is not None:
                    _, out = core.leave_pool(client_id, self.policy.name)
                    self._seen(out, leave)
            else:
                return

    def _seen(self, out: list[Delivery], now_ms: int) -> None:
        """Note the groups formed and the entries that expired in what the core returned."""
        formed: set[str] = set()
        for recipients, event in out:
            if isinstance(event, SessionFormed):
                if event.session_id in formed:
                    continue
                formed.add(event.session_id)
                members = tuple(self.index[m.client_id] for m in event.members)
                for i in members:
                    self.waiting.pop(i, None)
                self.outcome.groups.append(Group(now_ms, members))
            elif isinstance(event, EntryExpired):
                for client_id in recipients:
                    self.waiting.pop(self.index[client_id], None)


def _latencies(arrival: Arrival) -> dict[str, int] | None:
    """The arrival's latencies as a client sends them: whole milliseconds, rounded up."""
    if arrival.latencies is None:
        return None
    return {region: math.ceil(ms) for region, ms in arrival.latencies.items()}
