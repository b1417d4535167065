"""The core's clock as the plane's jobs read it when no frame brought the time."""

from __future__ import annotations

import time

__all__ = ["wall_clock_ms"]


def wall_clock_ms() -> int:
    """The core's clock: epoch milliseconds (``connection.py`` reads it inline per frame)."""
    return int(time.time() * 1000)
