"""What a source yields: one external item in tracker-neutral form."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

import msgspec

if TYPE_CHECKING:
    from tasktool.sync.transport import Transport


class RemoteItem(msgspec.Struct, frozen=True, kw_only=True):
    """An issue or ticket as the tracker holds it, before ``field_map`` applies.

    ``external_id`` is stable and unique across sources (``owner/repo#12``,
    ``PROJ-12``); ``priority`` is ``None`` when the tracker has none for it.
    """

    external_id: str
    title: str
    body: str = ""
    status: str | None = None
    priority: str | None = None
    labels: tuple[str, ...] = ()
    assignee: str | None = None
    url: str | None = None


class Source(Protocol):
    """A tracker's items, page by page (requests happen while iterating)."""

    transport: Transport

    def items(self) -> Iterator[RemoteItem]: ...

    def close(self) -> None: ...


__all__ = ["RemoteItem", "Source"]
