"""Refuse a JSON body that names one key twice in one object.

RFC 8259 leaves a repeated name's meaning to the parser: msgspec keeps the last
value, other parsers keep the first or refuse. A proxy that checks a body with
one parser and this server that applies it with another would then act on two
different requests (``{"id": "a", "id": "b"}`` looks like ``a`` to one, creates
``b`` on the other), so ``/admin`` accepts no body whose meaning depends on
that choice. msgspec cannot report repeated keys; this second pass, with the
standard library's parser, runs only on bodies msgspec already accepted (so of
bounded depth and size) and only on the control plane, which is not a hot path.
"""

from __future__ import annotations

import json
from typing import Any

from matchmaker.errors import MatchmakerError

__all__ = ["check_unique_keys"]


class _Repeated(dict[str, Any]):
    """An object in which ``key`` appeared more than once."""

    def __init__(self, pairs: dict[str, Any], key: str) -> None:
        super().__init__(pairs)
        self.key = key


def check_unique_keys(body: bytes) -> None:
    """``request.duplicate_key`` (400) naming the JSON path of the first key ``body``
    repeats inside one object; nothing when every object's keys are distinct."""
    try:
        parsed = json.loads(body, object_pairs_hook=_object)
    except (ValueError, RecursionError):  # what one parser refuses is refused
        raise MatchmakerError("the body is not valid JSON", code="request.malformed_json") from None
    path = _first_repeat("$", parsed)
    if path is not None:
        raise MatchmakerError(
            f"the key at `{path}` appears more than once in its object: each may appear once",
            code="request.duplicate_key",
            details={"field": path},
        )


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            return _Repeated(result, key)
        result[key] = value
    return result


def _first_repeat(path: str, value: Any) -> str | None:
    if isinstance(value, _Repeated):
        return f"{path}.{value.key}"
    if isinstance(value, dict):
        children = ((f"{path}.{key}", child) for key, child in value.items())
    elif isinstance(value, list):
        children = ((f"{path}[{index}]", child) for index, child in enumerate(value))
    else:
        return None
    return next((found for p, c in children if (found := _first_repeat(p, c)) is not None), None)
