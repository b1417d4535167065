"""Pluggable Project persistence: one small async protocol, three backends.

``memory://`` (tests, local play), ``sqlite:///file.db`` (embedded default,
durable), ``postgresql://...`` (production, extra ``matchmaker[postgres]``).
"""

from __future__ import annotations

from matchmaker.store.backends import DEFAULT_STORE_URL, open_store
from matchmaker.store.base import Change, ProjectStore, Revisions
from matchmaker.store.rows import Stored
from matchmaker.store.sealing import StoreKey
from matchmaker.store.url import redact_url

__all__ = [
    "DEFAULT_STORE_URL",
    "Change",
    "ProjectStore",
    "Revisions",
    "StoreKey",
    "Stored",
    "open_store",
    "redact_url",
]
