"""The operator's store key: client secrets sealed at rest, and the key of their index.

A store key is 32 random bytes, given as a file holding them in base64
(``openssl rand -base64 32 > store.key``; ``--store-key-file``). Three keys are
derived from it with HKDF-SHA256, one per use, so none of them is ever used
for two things:

- the AES-256-GCM key that seals each ``ProjectKey.secret`` (a fresh 96-bit
  nonce per value, the Project id as associated data, so a sealed value copied
  into another Project's row does not open there);
- the HMAC-SHA256 key of the secret index, the column that makes a secret
  unique across Projects: it holds ``HMAC(secret)``, which a copied database
  cannot test guesses against without the key (an unkeyed hash could be);
- the key id stored beside every sealed row: 16 hex digits that name the key
  without revealing it, so a server refuses a store sealed under another key
  instead of failing on each row.

The cryptography package does the cryptography; it is imported only when a
key is given, so a server without one never loads it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from matchmaker.errors import MatchmakerError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["StoreKey", "plain_digest"]

KEY_BYTES = 32
_NONCE_BYTES = 12
_SHARED_BITS = stat.S_IRWXG | stat.S_IRWXO
"""Permission bits that give a store key file to anyone but its owner."""


class StoreKey:
    """One store key: seals and opens secrets, digests them for the index, names itself."""

    def __init__(self, material: bytes) -> None:
        if len(material) != KEY_BYTES:
            raise bad_key(f"a store key is {KEY_BYTES} bytes, not {len(material)}")
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._aead: AESGCM = AESGCM(_derive(material, b"matchmaker store: seal secrets"))
        self._index = _derive(material, b"matchmaker store: secret index")
        self.key_id = _derive(material, b"matchmaker store: key id")[:8].hex()
        """What the store records beside each sealed row: names the key, reveals nothing."""

    @classmethod
    def from_file(cls, path: str | Path) -> StoreKey:
        """The key in ``path`` (base64 of 32 bytes; surrounding whitespace ignored).

        A file its group or others may read or write is refused (``store.key_file_mode``),
        as ``ssh`` refuses such a private key: whoever reads it opens every sealed secret.
        The mode is read from the file that was opened, so a swap between the check and
        the read cannot slip another file in."""
        try:
            with open(path, "rb") as file:
                mode = os.fstat(file.fileno()).st_mode
                text = file.read().strip()
        except OSError as exc:
            raise bad_key(f"cannot read the store key file {str(path)!r}: {exc.strerror}") from None
        if stat.S_IMODE(mode) & _SHARED_BITS:
            raise MatchmakerError(
                f"the store key file {str(path)!r} has mode {stat.S_IMODE(mode):04o}: its group "
                f"or others may read it; make it the owner's only (chmod 600 {str(path)!r})",
                code="store.key_file_mode",
            )
        try:
            material = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise bad_key(
                f"the store key file {str(path)!r} must hold {KEY_BYTES} random bytes in "
                "base64 (openssl rand -base64 32)"
            ) from None
        return cls(material)

    def seal(self, secret: str, project_id: str) -> str:
        """``secret`` encrypted and authenticated, bound to ``project_id``: base64 text."""
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, secret.encode(), project_id.encode())
        return base64.b64encode(nonce + sealed).decode()

    def open(self, sealed: str, project_id: str) -> str:
        """The secret ``seal`` sealed; ``store.corrupt`` if it was altered or moved."""
        from cryptography.exceptions import InvalidTag

        try:
            raw = base64.b64decode(sealed, validate=True)
            nonce, body = raw[:_NONCE_BYTES], raw[_NONCE_BYTES:]
            return self._aead.decrypt(nonce, body, project_id.encode()).decode()
        except (binascii.Error, ValueError, InvalidTag, UnicodeDecodeError):
            raise MatchmakerError(
                f"a sealed secret of Project {project_id!r} does not open with the store key "
                f"{self.key_id}: the row was altered",
                code="store.corrupt",
            ) from None

    def digest(self, secret: str) -> bytes:
        """The secret's index entry: HMAC-SHA256 under a key derived from this one."""
        return hmac.digest(self._index, secret.encode(), "sha256")


def plain_digest(secret: str) -> bytes:
    """The index entry of a secret stored in clear (no store key): SHA-256.

    A keyed hash would add nothing there: the row beside it holds the secret itself.
    """
    return hashlib.sha256(secret.encode()).digest()


def bad_key(message: str) -> MatchmakerError:
    return MatchmakerError(message, code="store.bad_key")


def _derive(material: bytes, info: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=info).derive(material)
