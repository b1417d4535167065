"""Pool modes: who chooses a group. One strategy per mode, behind :class:`ModeStrategy`.

===========  ==========================  ========================  =====================
mode         chooser                     consent                   module
===========  ==========================  ========================  =====================
auto         the server, oldest first    none                      here
claim        a client picks listed ones  being listed              :mod:`.claim`
mutual       every member picks          reciprocal picks          :mod:`.mutual`
propose      one client names a group    each named member         :mod:`.propose`
delegated    an authorised delegate      none                      :mod:`.delegated`
===========  ==========================  ========================  =====================

Each live pool gets its own strategy object from :data:`MODES` (see
:mod:`.strategy` for the seam).
"""

from __future__ import annotations

from collections.abc import Callable

from matchmaker.core.claim import ClaimMode
from matchmaker.core.delegated import DelegatedMode
from matchmaker.core.events import Delivery
from matchmaker.core.mutual import MutualMode
from matchmaker.core.propose import ProposeMode
from matchmaker.core.state import Entry, Pool
from matchmaker.core.strategy import ModeHost, ModeStrategy

__all__ = ["MODES", "AutoMode", "ModeStrategy"]


class AutoMode(ModeStrategy):
    """The server matches the oldest ``groupSize`` entries of a bucket, at once.

    Matching runs on every arrival, so a bucket never holds ``groupSize``
    entries between operations and forming a group looks at one bucket only.
    """

    name = "auto"

    def entered(self, entry: Entry, now_ms: int, out: list[Delivery]) -> None:
        if self.host.take_seat(entry, out):
            return  # a session's backfill goes before a new group
        group = self.pool.oldest(entry.bucket, self.pool.spec.group_size)
        if len(group) == self.pool.spec.group_size:
            self.host.form(group, out)


MODES: dict[str, Callable[[Pool, ModeHost], ModeStrategy]] = {
    "auto": AutoMode,
    "claim": ClaimMode,
    "mutual": MutualMode,
    "propose": ProposeMode,
    "delegated": DelegatedMode,
}
