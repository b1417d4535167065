"""Pool modes: who chooses a group. One strategy per mode, behind :class:`ModeStrategy`.

===========  ==========================  ========================  =====================
mode         chooser                     consent                   module
===========  ==========================  ========================  =====================
auto         the server, oldest first    none                      :mod:`.auto`
auto+range   the server, closest first   none                      :mod:`.skill`
auto+teams   the server, most balanced   none                      :mod:`.teams`
claim        a client picks listed ones  being listed              :mod:`.claim`
mutual       every member picks          reciprocal picks          :mod:`.mutual`
propose      one client names a group    each named member         :mod:`.propose`
delegated    an authorised delegate      none                      :mod:`.delegated`
===========  ==========================  ========================  =====================

Each live pool gets its own strategy object from :data:`MODES` (in :mod:`.auto`; see
:mod:`.strategy` for the seam). The package re-exports what the engine asks for.
"""

from __future__ import annotations

from matchmaker.core.modes.auto import MODES, AutoMode
from matchmaker.core.modes.strategy import ModeStrategy

__all__ = ["MODES", "AutoMode", "ModeStrategy"]
