"""From a :class:`RemoteItem` to the task fields sync writes, through ``field_map``.

Sync owns these keys of a synced task: ``title``, ``external_id``, the body,
and, when mapped or enabled, ``status``, ``priority``, ``tags``
(``labels_to_tags``) and ``owner`` (``assignee_to_owner``). Every other key of
the file is the user's and is never touched.

An external status or priority that ``field_map`` does not map is reported
as an :class:`Unmapped` note and the field is left out (unset on a new task,
unchanged on an update): it never silently becomes ``pending``.
"""

from __future__ import annotations

import hashlib
import re

import msgspec

from tasktool.config.sync import FieldMap
from tasktool.sync.remote import RemoteItem

_TAG_SEPARATORS = re.compile(r"[\s,]+")


class Unmapped(msgspec.Struct, frozen=True, kw_only=True):
    """An external value ``field_map`` has no entry for."""

    field: str
    value: str
    external_id: str


class Desired(msgspec.Struct, frozen=True, kw_only=True):
    """What the task file should hold for one item: owned scalar and list fields, the body,
    and the hash that tells whether the remote side changed since the last sync."""

    external_id: str
    scalars: dict[str, str | None]
    lists: dict[str, tuple[str, ...]]
    body: str
    remote_hash: str
    unmapped: tuple[Unmapped, ...] = ()


def normalise_tag(label: str) -> str:
    """A label as a tag: lower case, blanks and commas as ``-`` (``"Good first issue"`` is
    ``good-first-issue``)."""
    return _TAG_SEPARATORS.sub("-", label.strip().lower()).strip("-")


def _body(text: str) -> str:
    text = text.replace("\r\n", "\n").strip("\n")
    return text + "\n" if text else ""


def desired_task(item: RemoteItem, field_map: FieldMap) -> Desired:
    """The owned fields for ``item`` and the notes about values ``field_map`` lacks."""
    title = " ".join(item.title.split()) or item.external_id  # one line, never blank
    scalars: dict[str, str | None] = {"title": title, "external_id": item.external_id}
    lists: dict[str, tuple[str, ...]] = {}
    unmapped: list[Unmapped] = []
    for field, value, table in (
        ("status", item.status, field_map.status),
        ("priority", item.priority, field_map.priority),
    ):
        if value is None:
            continue
        if value in table:
            scalars[field] = table[value]
        else:
            unmapped.append(Unmapped(field=field, value=value, external_id=item.external_id))
    if field_map.assignee_to_owner:
        scalars["owner"] = item.assignee
    if field_map.labels_to_tags:
        tags = (normalise_tag(label) for label in item.labels)
        lists["tags"] = tuple(dict.fromkeys(tag for tag in tags if tag))
    body = _body(item.body)
    digest = hashlib.sha256(msgspec.json.encode([scalars, lists, body], order="sorted"))
    return Desired(
        external_id=item.external_id,
        scalars=scalars,
        lists=lists,
        body=body,
        remote_hash=digest.hexdigest(),
        unmapped=tuple(unmapped),
    )


__all__ = ["Desired", "Unmapped", "desired_task", "normalise_tag"]
