"""A ``jwt`` credential, verified sans I/O: the player id and trusted attributes it carries.

PyJWT checks the signature (with the Project key of the token's algorithm),
``iss``, ``aud`` and that ``sub`` and ``exp`` are present; the time claims are
checked here against the wall clock the shell passes in, with
:data:`LEEWAY_S` for clock skew, so the core reads no clock and tests need no
sleeping. What a token gives obeys the rules a client's own values obey: ``sub``
becomes the player id only if it keeps the name rule (``model.Name``), and a mapped
claim becomes an attribute only if :func:`matchmaker.rules.attributes.value_problem` finds
none. Every refusal is ``auth.invalid_credential`` with ``details.reason``
(:data:`REASONS`); neither the token, nor a key, nor a library's exception name is
ever part of a message.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from matchmaker.config import Limits
from matchmaker.errors import MatchmakerError
from matchmaker.model import MAX_NAME_CHARS, FilterValue, Project, ProjectKey, name_problem
from matchmaker.rules.attributes import value_problem

__all__ = [
    "LEEWAY_S",
    "REASONS",
    "Identity",
    "invalid_credential",
    "looks_like_token",
    "signed_by",
    "unverified_issuer",
    "verify",
]

LEEWAY_S = 60
"""Seconds of clock skew allowed between the token's issuer and this server, both ways:
a token is expired ``LEEWAY_S`` after its ``exp`` and valid ``LEEWAY_S`` before its ``nbf``."""
ATTRIBUTE_PREFIX = "attributes."

REASONS = (
    "malformed",
    "unknown_project",
    "unknown_issuer",
    "ambiguous_issuer",
    "bad_signature",
    "expired",
    "not_yet_valid",
    "wrong_audience",
    "wrong_issuer",
    "missing_claim",
    "bad_claim",
)
"""Every ``details.reason`` of a refused token (``docs/protocol.md`` lists them)."""

_CLAIMS_OF = {"aud": "wrong_audience", "iss": "wrong_issuer"}


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a valid token says the client is.

    ``trusted`` is every attribute name the verifying key's ``claims`` fill, present in
    the token or not: the client may send none of them itself.
    """

    player_id: str
    attributes: dict[str, FilterValue]
    trusted: frozenset[str]


def invalid_credential(reason: str, message: str) -> MatchmakerError:
    """The refusal of a credential, with the stable ``reason`` a client can branch on."""
    return MatchmakerError(message, code="auth.invalid_credential", details={"reason": reason})


def looks_like_token(credential: str) -> bool:
    """Whether ``credential`` has a JWT's shape (three dot-separated, non-empty parts)."""
    parts = credential.split(".")
    return len(parts) == 3 and all(parts)


def unverified_issuer(token: str) -> str | None:
    """The ``iss`` claim, read before anything is verified: only to pick the Project whose
    keys will verify the token (a lie here just picks keys that then refuse it)."""
    import jwt  # imported on first use: most servers never see a token

    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        raise invalid_credential("malformed", "the token is not a well-formed JWT") from None
    issuer = claims.get("iss")
    return issuer if isinstance(issuer, str) else None


def verify(
    project: Project, token: str, now_ms: int, limits: Limits, *, resuming: bool = False
) -> Identity:
    """The identity in ``token`` if one of the Project's jwt keys verifies it at ``now_ms``
    (epoch milliseconds, the core's clock), else ``auth.invalid_credential``.

    ``resuming``: the token comes with a resume token, which proves the connection, so its
    ``exp`` is not held against it (every other check is): a token verified at ``hello``
    holds for the connection (:func:`signed_by`), and a resume continues that connection,
    so a network blip after ``exp`` does not end a client that staying connected would
    have kept. The resume token alone admits no one: it is single-use, rotated at every
    resume, bound to the Project and to the token's ``sub``, and dies with the grace."""
    now_s = now_ms / 1000  # what a JWT's time claims count in
    key, claims = _decode(project.jwt_keys(), token)
    expires = _time_claim(claims, "exp")
    if expires is not None and expires <= now_s - LEEWAY_S and not resuming:
        raise invalid_credential("expired", "the token has expired")
    starts = _time_claim(claims, "nbf")
    if starts is not None and starts > now_s + LEEWAY_S:
        raise invalid_credential("not_yet_valid", "the token is not valid yet (nbf)")
    player_id = claims["sub"]
    if not isinstance(player_id, str) or name_problem(player_id) is not None:
        raise invalid_credential(
            "bad_claim",
            f"the token's sub is not a name (1 to {MAX_NAME_CHARS} characters without "
            "control characters)",
        )
    mapping = key.claims or {}
    attributes = dict(_trusted_attributes(mapping, claims, limits))
    trusted = frozenset(target.removeprefix(ATTRIBUTE_PREFIX) for target in mapping.values())
    return Identity(player_id, attributes, trusted)


def signed_by(project: Project, token: str) -> bool:
    """Whether one of the Project's current jwt keys still verifies ``token`` (its time
    claims are not checked again: a token verified at ``hello`` holds for the connection)."""
    try:
        _decode(project.jwt_keys(), token)
    except MatchmakerError:
        return False
    return True


def _decode(keys: Iterable[ProjectKey], token: str) -> tuple[ProjectKey, dict[str, Any]]:
    """The first key (of the token's algorithm) whose signature check passes, and the
    claims; a key that verifies the signature also decides ``iss``/``aud`` refusals."""
    import jwt

    try:
        algorithm = jwt.get_unverified_header(token).get("alg")
    except jwt.InvalidTokenError:
        raise invalid_credential("malformed", "the token is not a well-formed JWT") from None
    for key in keys:
        if key.algorithm is None or key.algorithm != algorithm or key.key is None:
            continue
        try:
            claims = jwt.decode(
                token,
                _verifying_key(key.algorithm, key.key),
                algorithms=[key.algorithm],
                audience=key.audience,
                issuer=key.issuer,
                options={
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                    "verify_aud": key.audience is not None,
                    "verify_sub": False,  # checked here, by the name rule
                    "verify_jti": False,  # ignored, as other claims are
                    "require": ["sub", "exp"],
                },
            )
        except jwt.InvalidSignatureError:
            continue
        except jwt.InvalidAudienceError:
            raise invalid_credential(
                "wrong_audience", "the token is for another audience"
            ) from None
        except jwt.InvalidIssuerError:
            raise invalid_credential("wrong_issuer", "the token is from another issuer") from None
        except jwt.MissingRequiredClaimError as exc:
            reason = _CLAIMS_OF.get(exc.claim, "missing_claim")
            raise invalid_credential(reason, f"the token has no {exc.claim} claim") from None
        except jwt.DecodeError:
            raise invalid_credential("malformed", "the token is not a well-formed JWT") from None
        except jwt.PyJWTError:
            raise invalid_credential("bad_claim", "a claim of the token is refused") from None
        return key, claims
    raise invalid_credential(
        "bad_signature", "no key of the Project verifies the token's signature"
    )


@functools.lru_cache(maxsize=256)
def _verifying_key(algorithm: str, key: str) -> Any:
    """The parsed public key (the secret itself for HS256), parsed once per key rather than
    at every ``hello`` and every later check of a token's signature."""
    if algorithm == "HS256":
        return key
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    return load_pem_public_key(key.encode())


def _trusted_attributes(
    mapping: Mapping[str, str], claims: Mapping[str, Any], limits: Limits
) -> Iterable[tuple[str, FilterValue]]:
    for claim, target in mapping.items():
        if claim not in claims:
            continue
        value = claims[claim]
        problem = value_problem(value, limits)
        if problem is not None:
            raise invalid_credential("bad_claim", f"claim {claim!r} {problem.rule}")
        yield target.removeprefix(ATTRIBUTE_PREFIX), value


def _time_claim(claims: Mapping[str, Any], name: str) -> float | None:
    """Claim ``name`` (``exp``, ``nbf``) as epoch seconds, ``None`` when absent; a value
    that is not a finite number is a ``bad_claim``, never a time in the past or future."""
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise invalid_credential("bad_claim", f"the token's {name} is not a number")
    return float(value)
