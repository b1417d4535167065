"""The one rule an attribute's value obeys, whoever gives it: a client in ``hello`` or a
token's mapped claim (a trusted attribute).

A value is a string of at most ``max_attribute_value_chars`` characters, a boolean, an
integer every JSON reader holds exactly (within ±(2^53 − 1), I-JSON, RFC 7493) or a
finite float. Larger integers would be rounded by a browser peer that reads them, and
cannot cross between cluster members at all (msgpack stops at 64 bits); a NaN equals
nothing, so a filter on it would never match. The data plane and the token check both
ask :func:`value_problem`, so a claim can never carry what a client may not send.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from matchmaker.config import Limits

__all__ = ["MAX_SAFE_INTEGER", "ValueProblem", "value_problem"]

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer an attribute may hold (its negation the smallest)."""


@dataclass(frozen=True, slots=True)
class ValueProblem:
    """Why a value is refused (``rule`` completes "the value ..."), and the bound it
    passes, if any: each caller turns it into its own error."""

    rule: str
    limit: int | None = None


def value_problem(value: object, limits: Limits) -> ValueProblem | None:
    """Why ``value`` cannot be an attribute's value, or ``None`` when it can."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        chars = limits.max_attribute_value_chars
        if len(value) <= chars:
            return None
        return ValueProblem(f"is too long (at most {chars} characters)", chars)
    if isinstance(value, int):
        if abs(value) <= MAX_SAFE_INTEGER:
            return None
        return ValueProblem("is an integer beyond ±(2^53 - 1)", MAX_SAFE_INTEGER)
    if isinstance(value, float):
        return None if math.isfinite(value) else ValueProblem("is not a finite number")
    return ValueProblem("is not a string, number or boolean")
