"""The rules of a Project's ``keys`` that msgspec cannot express, per key type.

A ``shared-secret`` key is its secret (distinct within the Project, scopes
listed once). A ``jwt`` key must be usable before it is stored: its ``key``
parses as a PEM public key of the algorithm's kind (or, for HS256, is a secret
of a length HMAC-SHA256 deserves), and ``claims`` fills distinct attributes,
no more than a client may hold. Failing here, at ``POST``/``PATCH``/``?dryRun``,
spares every ``hello`` of a Project with a key nobody can verify against.
"""

from __future__ import annotations

from collections.abc import Callable

from matchmaker.config import Limits
from matchmaker.errors import MatchmakerError
from matchmaker.model import MAX_SECRET_CHARS, Project, ProjectKey

__all__ = ["HS256_MAX_BYTES", "HS256_MIN_BYTES", "PEM_MAX_CHARS", "check_keys"]

HS256_MIN_BYTES = 32
"""RFC 7518 section 3.2: an HS256 key has at least as many bits as the hash (256)."""
HS256_MAX_BYTES = 1024
PEM_MAX_CHARS = 16384
"""Room for an RSA-8192 public key in PEM, and no more."""
RSA_MIN_BITS = 2048

_JWT_ONLY = ("algorithm", "key", "issuer", "audience", "claims")

Invalid = Callable[[str, str], MatchmakerError]


def check_keys(project: Project, limits: Limits, invalid: Invalid) -> None:
    """Raise ``invalid(field, rule)`` for the first key that breaks its type's rules."""
    secrets: dict[str, int] = {}
    for i, key in enumerate(project.keys):
        at = f"$.keys[{i}]"
        if key.type == "jwt":
            _check_jwt(at, key, limits, invalid)
            continue
        for name in _JWT_ONLY:
            if getattr(key, name) is not None:
                raise invalid(f"{at}.{name}", "only a key of type jwt takes this field")
        if key.secret is None:
            raise invalid(f"{at}.secret", "a shared-secret key needs its secret")
        if key.secret in secrets:
            raise invalid(f"{at}.secret", f"duplicates keys[{secrets[key.secret]}].secret")
        secrets[key.secret] = i
        if len(key.secret) > MAX_SECRET_CHARS:
            raise invalid(f"{at}.secret", f"must be at most {MAX_SECRET_CHARS} characters")
        if len(set(key.scopes)) != len(key.scopes):
            raise invalid(f"{at}.scopes", "each scope may be listed once")


def _check_jwt(at: str, key: ProjectKey, limits: Limits, invalid: Invalid) -> None:
    if key.secret is not None:
        raise invalid(f"{at}.secret", "a jwt key has no secret: the token is the credential")
    if key.scopes:
        raise invalid(f"{at}.scopes", "a jwt key grants no scopes")
    if key.algorithm is None:
        raise invalid(f"{at}.algorithm", "a jwt key needs its algorithm")
    if key.key is None:
        raise invalid(f"{at}.key", "a jwt key needs its key (a PEM public key, or the secret)")
    problem = key_problem(key.algorithm, key.key)
    if problem is not None:
        raise invalid(f"{at}.key", problem)
    claims = key.claims or {}
    if len(claims) > limits.max_attributes:
        raise invalid(
            f"{at}.claims",
            f"at most {limits.max_attributes} claims (the attributes a client holds)",
        )
    filled: dict[str, str] = {}
    for claim, target in claims.items():
        if target in filled:
            raise invalid(f"{at}.claims.{claim}", f"{target} is already filled by {filled[target]}")
        filled[target] = claim


def key_problem(algorithm: str, key: str) -> str | None:
    """Why ``key`` cannot verify tokens signed with ``algorithm``, or ``None``."""
    if algorithm == "HS256":
        size = len(key.encode())
        if not HS256_MIN_BYTES <= size <= HS256_MAX_BYTES:
            return (
                f"an HS256 secret is {HS256_MIN_BYTES} to {HS256_MAX_BYTES} bytes "
                f"(this one is {size})"
            )
        return None
    if len(key) > PEM_MAX_CHARS:
        return f"a PEM public key is at most {PEM_MAX_CHARS} characters"
    # Imported here: cryptography's key types load only when a jwt key is declared.
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        public = load_pem_public_key(key.encode())
    except (ValueError, TypeError) as exc:
        return f"not a PEM public key ({type(exc).__name__})"
    if algorithm == "EdDSA" and not isinstance(
        public, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey)
    ):
        return "EdDSA needs an Ed25519 or Ed448 public key"
    if algorithm == "ES256" and not (
        isinstance(public, ec.EllipticCurvePublicKey) and public.curve.name == "secp256r1"
    ):
        return "ES256 needs a P-256 (secp256r1) public key"
    if algorithm == "RS256":
        if not isinstance(public, rsa.RSAPublicKey):
            return "RS256 needs an RSA public key"
        if public.key_size < RSA_MIN_BITS:
            return f"an RS256 key has at least {RSA_MIN_BITS} bits"
    return None
