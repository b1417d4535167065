"""Realtime matchmaking service: WebSocket data plane, HTTP control plane."""

from __future__ import annotations

from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, ProjectKey

__all__ = ["MatchmakerError", "MatchmakingPolicy", "Project", "ProjectKey", "__version__"]
__version__ = "0.1.0"
