"""The rules every pool filter obeys, on the data plane (ad-hoc pools) and in ``/admin`` policies.

A filter that breaks one describes a pool no client can enter: a key no
client can declare (bad name, more keys than ``max_attributes``), a literal
longer than any attribute value may be, or a filter on a mode whose groups
are not formed by the server. Each plane turns the :class:`FilterProblem` into
its own error code; the rule itself lives only here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from matchmaker.config import Limits
from matchmaker.model import SELF, FilterValue

__all__ = ["ATTRIBUTE_NAME", "FILTERED_MODES", "FilterProblem", "filter_problem"]

ATTRIBUTE_NAME = r"^[A-Za-z0-9_.-]{1,64}$"
"""What an attribute name (and so a filter key) may be."""

FILTERED_MODES = frozenset({"auto"})
"""Modes whose pools may filter: the server forms their groups by bucket."""

_NAME = re.compile(ATTRIBUTE_NAME)


@dataclass(frozen=True, slots=True)
class FilterProblem:
    """Why a filter is refused; ``attribute`` is the offending key, ``None`` for the whole."""

    rule: str
    attribute: str | None = None
    limit: int | None = None


def filter_problem(
    filter: Mapping[str, FilterValue], mode: str | None, limits: Limits
) -> FilterProblem | None:
    """The first rule ``filter`` breaks, or ``None``. ``mode`` ``None``: not known yet."""
    if filter and mode is not None and mode not in FILTERED_MODES:
        modes = ", ".join(sorted(FILTERED_MODES))
        return FilterProblem(f"a filter applies to mode {modes} only, not {mode!r}")
    if len(filter) > limits.max_attributes:
        return FilterProblem(
            f"at most {limits.max_attributes} filter keys (the attributes a client may declare)",
            limit=limits.max_attributes,
        )
    for key, value in filter.items():
        if not _NAME.match(key):
            return FilterProblem(
                "a filter key must be an attribute name: 1 to 64 of A-Z a-z 0-9 _ . -", key
            )
        too_long = isinstance(value, str) and len(value) > limits.max_attribute_value_chars
        if too_long and value != SELF:
            return FilterProblem(
                f"a filter value is at most {limits.max_attribute_value_chars} characters "
                "(the longest attribute value)",
                key,
                limits.max_attribute_value_chars,
            )
    return None
