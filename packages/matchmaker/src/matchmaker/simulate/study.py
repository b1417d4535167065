"""One simulation: the policies checked, each replayed over the same trace, summarised.

Everything that can be refused is refused before the first policy runs (a
mode the simulator cannot play, an arrival a policy's filter would not
admit), so a run either reports every policy or none.
"""

from __future__ import annotations

from matchmaker.arrivals import Trace
from matchmaker.config import Limits
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy
from matchmaker.simulate.run import check_admitted, replay
from matchmaker.simulate.stats import Summary, summarize

__all__ = ["study"]


def study(policies: list[MatchmakingPolicy], trace: Trace, limits: Limits) -> list[Summary]:
    """Each policy over ``trace`` on a core of its own, in the order given. Two policies of
    one name are told apart as ``name (2)``."""
    for policy in policies:
        if policy.mode != "auto":
            raise MatchmakerError(
                f"policy {policy.name!r} is {policy.mode}: only auto policies can be "
                "simulated (in the other modes clients choose their groups)",
                code="simulate.unsupported",
                details={"policy": policy.name, "mode": policy.mode},
            )
        check_admitted(policy, trace)
    summaries: list[Summary] = []
    for policy in policies:
        name = policy.name
        if any(s.name == name for s in summaries):
            name = f"{name} ({len(summaries) + 1})"
        summaries.append(summarize(name, policy, trace, replay(policy, trace, limits)))
    return summaries
