"""The rules every pool filter obeys, on the data plane (ad-hoc pools) and in ``/admin`` policies.

A filter that breaks one describes a pool no client can enter: a key no
client can declare (bad name, more keys than ``max_attributes``), a literal
no attribute value may be (:func:`matchmaker.rules.attributes.value_problem`: too
long, an integer past ±(2^53 − 1)), or a filter on a mode whose groups
are not formed by the server. A range rule (``{"within": ..., "widen": ...}``)
is one per filter, because the pool keeps one ordered index per bucket and one
rule is what makes an enter cost O(log n); its ``widen.max`` is at least its
``within``. The group-size fields (:func:`group_problem`) are checked the same way.
Each plane turns the :class:`FilterProblem` into its own error code; the rule
itself lives only here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from matchmaker.config import Limits
from matchmaker.model import SELF, FilterTerm, RangeRule
from matchmaker.rules.attributes import value_problem

__all__ = ["ATTRIBUTE_NAME", "FILTERED_MODES", "FilterProblem", "filter_problem", "group_problem"]

ATTRIBUTE_NAME = r"^[A-Za-z0-9_.-]{1,64}$"
"""What an attribute name (and so a filter key) may be."""

FILTERED_MODES = frozenset({"auto"})
"""Modes whose pools may filter: the server forms their groups by bucket."""

_NAME = re.compile(ATTRIBUTE_NAME)


@dataclass(frozen=True, slots=True)
class FilterProblem:
    """Why a filter is refused; ``attribute`` is the offending key, ``None`` for the whole;
    ``part`` the offending field inside a range rule (``widen.max``)."""

    rule: str
    attribute: str | None = None
    limit: int | None = None
    part: str | None = None

    def path(self, field: str) -> str:
        """The JSON path of the offending value below ``field`` (the filter's path)."""
        return ".".join(p for p in (field, self.attribute, self.part) if p is not None)


def filter_problem(
    filter: Mapping[str, FilterTerm], mode: str | None, limits: Limits
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
    ranges = [key for key, value in filter.items() if isinstance(value, RangeRule)]
    if len(ranges) > 1:
        return FilterProblem("at most one range rule per filter", ranges[1])
    for key, value in filter.items():
        if not _NAME.match(key):
            return FilterProblem(
                "a filter key must be an attribute name: 1 to 64 of A-Z a-z 0-9 _ . -", key
            )
        literal = None
        if not isinstance(value, RangeRule) and value != SELF:
            literal = value_problem(value, limits)
        if literal is not None:
            return FilterProblem(
                f"a filter value {literal.rule}: no attribute can hold it", key, literal.limit
            )
        if isinstance(value, RangeRule) and value.widen and value.widen.max < value.within:
            return FilterProblem("widen.max must be at least within", key, part="widen.max")
    return None


def group_problem(
    mode: str | None, group_size: int | None, min_group_size: int | None, fill: int | None
) -> FilterProblem | None:
    """The first rule the group-size fields break, or ``None`` (``attribute`` names the
    field). ``minGroupSize`` and ``fillTimeoutMs`` come together, on ``auto`` only (the
    server forms those groups), and the minimum is at most ``groupSize``, the maximum."""
    if min_group_size is None and fill is None:
        return None
    if min_group_size is None or fill is None:
        field = "fillTimeoutMs" if fill is None else "minGroupSize"
        return FilterProblem("minGroupSize and fillTimeoutMs are given together", field)
    if mode is not None and mode not in FILTERED_MODES:
        modes = ", ".join(sorted(FILTERED_MODES))
        return FilterProblem(
            f"minGroupSize applies to mode {modes} only, not {mode!r}", "minGroupSize"
        )
    if group_size is not None and min_group_size > group_size:
        return FilterProblem("minGroupSize must be at most groupSize", "minGroupSize")
    return None
