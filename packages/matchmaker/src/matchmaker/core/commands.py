"""What a client asks of the core, as plain values decoded from the wire by the shell.

The data plane's wire module (:mod:`matchmaker.data.protocol`) validates frames
and converts each request into one of these; the core never sees JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matchmaker.model import FilterValue

__all__ = ["EnterPool"]


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
