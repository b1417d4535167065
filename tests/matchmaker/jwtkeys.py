"""Signing keys of the four ``jwt`` algorithms, made by cryptography per test run, and
tokens minted with PyJWT: what an identity provider would hand a game client."""

from __future__ import annotations

import functools
import secrets
import time
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from matchmaker.model import JwtAlgorithm, ProjectKey

ALGORITHMS: tuple[JwtAlgorithm, ...] = ("EdDSA", "ES256", "RS256", "HS256")
ISSUER = "https://id.example.test"
AUDIENCE = "matchmaker"


@dataclass(frozen=True)
class Signer:
    """One signing key: ``signing`` signs, ``verifying`` is what a ProjectKey holds."""

    algorithm: JwtAlgorithm
    signing: Any
    verifying: str

    def key(self, **fields: Any) -> ProjectKey:
        """The ``jwt`` ProjectKey that verifies this signer's tokens."""
        return ProjectKey(type="jwt", algorithm=self.algorithm, key=self.verifying, **fields)

    def token(
        self, sub: str | None = "player-1", *, now: float | None = None, **claims: Any
    ) -> str:
        """A token valid for ten minutes from ``now``; a claim given as ``None`` is left out."""
        issued = time.time() if now is None else now
        payload = {"sub": sub, "iat": int(issued), "exp": int(issued + 600), **claims}
        payload = {name: value for name, value in payload.items() if value is not None}
        return jwt.encode(payload, self.signing, algorithm=self.algorithm)


@functools.cache
def signer(algorithm: JwtAlgorithm, which: int = 0) -> Signer:
    """A key pair (or HS256 secret) of ``algorithm``; ``which`` picks another one."""
    if algorithm == "HS256":
        secret = secrets.token_urlsafe(32)
        return Signer(algorithm, secret, secret)
    private: ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
    if algorithm == "EdDSA":
        private = ed25519.Ed25519PrivateKey.generate()
    elif algorithm == "ES256":
        private = ec.generate_private_key(ec.SECP256R1())
    else:
        private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return Signer(algorithm, private, public.decode())
