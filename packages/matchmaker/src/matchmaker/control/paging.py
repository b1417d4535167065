"""Paging of the ``/admin`` lists: ``?limit=`` and an opaque ``cursor`` (the last id seen)."""

from __future__ import annotations

import base64
import binascii

import msgspec

from matchmaker.control.validation import invalid
from matchmaker.model import ProjectId

__all__ = ["DEFAULT_PAGE", "MAX_PAGE", "decode_cursor", "encode_cursor", "page_limit"]

DEFAULT_PAGE = 100
MAX_PAGE = 1000
_ID = msgspec.json.Decoder(ProjectId)


def page_limit(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_PAGE
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= MAX_PAGE:
        raise invalid("limit", f"must be an integer from 1 to {MAX_PAGE}")
    return int(raw)


def encode_cursor(last_id: str) -> str:
    return base64.urlsafe_b64encode(last_id.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        last_id = base64.b64decode(padded, altchars=b"-_", validate=True).decode()
        _ID.decode(msgspec.json.encode(last_id))
    except (binascii.Error, UnicodeError, ValueError, msgspec.ValidationError):
        raise invalid("cursor", "not a cursor returned by this API") from None
    return last_id
