"""How a Project becomes a stored row and back: sealed secrets, key id, revision.

A row is ``(id, body, key_id, revision)``. ``body`` is the Project's wire JSON
with each ``keys[].secret`` (and the ``key`` of an HS256 ``jwt`` key) sealed
under the store key when there is one (:mod:`matchmaker.store.sealing`);
``key_id`` names that key (``NULL``: the secrets are in clear); ``revision``
changes on every write and is the Project's ``ETag``. A store holds its rows
under one key: a server started with another key, or without one, refuses the
store (``store.key_mismatch``) before it serves or rewrites anything;
``matchmaker admin rotate-store-key`` moves a store from one key (or none) to
another.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from matchmaker.errors import MatchmakerError
from matchmaker.model import Project
from matchmaker.store.sealing import StoreKey, plain_digest

__all__ = ["Resealed", "RowCodec", "Stored", "etag", "new_revision", "reseal"]

_DECODER = msgspec.json.Decoder(Project)


@dataclass(frozen=True, slots=True)
class Stored:
    """A Project as the store holds it: the Project and the revision of its last write."""

    project: Project
    revision: str

    @property
    def etag(self) -> str:
        """The strong HTTP entity tag of this revision."""
        return etag(self.revision)


def etag(revision: str) -> str:
    """A revision as a strong HTTP entity tag (rows written before revisions have ``"0"``)."""
    return f'"{revision}"'


def new_revision() -> str:
    """A revision no other write of this Project has had (random, so a Project deleted and
    created again never repeats an old ``ETag``)."""
    return secrets.token_hex(8)


class RowCodec:
    """Rows under one store key (or none): encode, decode, index, check a store's key ids."""

    def __init__(self, key: StoreKey | None) -> None:
        self.key = key

    @property
    def key_id(self) -> str | None:
        return None if self.key is None else self.key.key_id

    def encode(self, project: Project) -> str:
        """The row body: the wire JSON, secrets sealed when there is a key."""
        if self.key is None or not project.keys:
            return msgspec.json.encode(project).decode()
        plain: dict[str, Any] = msgspec.to_builtins(project)
        for key, declared in zip(plain["keys"], project.keys, strict=True):
            field = declared.sealed_field
            if field is not None:
                key[field] = self.key.seal(key[field], project.id)
        return msgspec.json.encode(plain).decode()

    def decode(self, body: str | bytes, key_id: str | None) -> Project:
        """The Project of a row written under ``key_id``; a corrupt row is ``store.corrupt``.

        Sealed secrets are opened before the Project is validated: the sealed
        text is longer than the secret, so it is not held to the secret's limits.
        """
        if key_id != self.key_id:
            raise key_mismatch([key_id], self.key_id)
        try:
            if self.key is None:
                return _DECODER.decode(body)
            plain = msgspec.json.decode(body)
            for key in plain.get("keys") or ():
                field = _sealed_field(key)
                if field is not None:
                    key[field] = self.key.open(str(key[field]), str(plain["id"]))
            return msgspec.convert(plain, Project)
        except (msgspec.DecodeError, TypeError, KeyError, AttributeError) as exc:
            raise MatchmakerError(
                f"a stored Project is corrupt: {exc}", code="store.corrupt"
            ) from exc

    def digests(self, project: Project) -> list[bytes]:
        """The secret index entries of a Project: HMAC under the key, SHA-256 without one."""
        key = self.key
        digest = plain_digest if key is None else key.digest
        return [digest(secret) for secret in project.shared_secrets()]

    def check(self, stored_key_ids: Iterable[str | None]) -> None:
        """Refuse a store whose rows were written under any other key than this one."""
        others = sorted({k for k in stored_key_ids if k != self.key_id}, key=str)
        if others:
            raise key_mismatch(others, self.key_id)


@dataclass(frozen=True, slots=True)
class Resealed:
    """A row re-encoded under the new key: what ``rotate-store-key`` writes back."""

    project_id: str
    body: str
    key_id: str | None
    digests: list[bytes]


def reseal(
    rows: Iterable[tuple[str, str, str | None]],
    old_keys: Sequence[StoreKey | None],
    new_key: StoreKey | None,
) -> list[Resealed]:
    """Every row ``(id, body, key_id)`` opened with the old key it names, sealed under the new.

    ``None`` among ``old_keys`` opens rows in clear. A row under a key that is not
    given fails the whole rotation (``store.key_mismatch``) before anything is written.
    """
    readers = {codec.key_id: codec for codec in map(RowCodec, old_keys)}
    writer = RowCodec(new_key)
    resealed = []
    for project_id, body, key_id in rows:
        reader = readers.get(key_id)
        if reader is None:
            raise key_mismatch([key_id], *readers)
        project = reader.decode(body, key_id)
        resealed.append(
            Resealed(project_id, writer.encode(project), writer.key_id, writer.digests(project))
        )
    return resealed


def _sealed_field(key: dict[str, Any]) -> str | None:
    """:attr:`ProjectKey.sealed_field` of a key row before it is decoded."""
    if key.get("type", "shared-secret") == "shared-secret":
        return "secret"
    return "key" if key.get("algorithm") == "HS256" else None


def key_mismatch(found: Sequence[str | None], *expected: str | None) -> MatchmakerError:
    named = ", ".join(_name(k) for k in found)
    given = ", ".join(_name(k) for k in expected) or "none"
    return MatchmakerError(
        f"stored secrets were written under {named}, but the key given is {given}: start with "
        "the store key they were written under (--store-key-file), or move them with "
        "'matchmaker admin rotate-store-key'; nothing was changed",
        code="store.key_mismatch",
        details={"stored": [k or "none" for k in found], "given": [k or "none" for k in expected]},
    )


def _name(key_id: str | None) -> str:
    return "no key (in clear)" if key_id is None else f"key {key_id}"
