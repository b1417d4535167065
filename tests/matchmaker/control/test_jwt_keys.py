"""``jwt`` ProjectKeys over real HTTP: accepted for each algorithm, refused when no token
could ever be verified with them, and never the management key."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from matchmaker.config import ServerConfig
from matchmaker.directory import ProjectDirectory
from tests.matchmaker.jwtkeys import ALGORITHMS, signer

from .conftest import ServerThread

ED = signer("EdDSA").verifying
CLAIMS = {"rating": "attributes.rating"}


def with_jwt(**fields: Any) -> dict[str, Any]:
    key = {"type": "jwt", "algorithm": "EdDSA", "key": ED, **fields}
    return {"id": "a", "keys": [{k: v for k, v in key.items() if v is not None}]}


def weak_rsa() -> str:
    private = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    public = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return public.decode()


def private_pem() -> str:
    private = ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return private.decode()


K0 = "$.keys[0]."
INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("no-algorithm", with_jwt(algorithm=None), K0 + "algorithm"),
    ("algorithm-none", with_jwt(algorithm="none"), K0 + "algorithm"),
    ("no-key", with_jwt(key=None), K0 + "key"),
    ("not-pem", with_jwt(key="hello"), K0 + "key"),
    ("private-key", with_jwt(key=private_pem()), K0 + "key"),
    ("eddsa-with-rsa", with_jwt(key=signer("RS256").verifying), K0 + "key"),
    ("es256-with-ed25519", with_jwt(algorithm="ES256"), K0 + "key"),
    ("rs256-with-ec", with_jwt(algorithm="RS256", key=signer("ES256").verifying), K0 + "key"),
    ("rs256-1024-bits", with_jwt(algorithm="RS256", key=weak_rsa()), K0 + "key"),
    ("hs256-short", with_jwt(algorithm="HS256", key="s" * 31), K0 + "key"),
    ("hs256-long", with_jwt(algorithm="HS256", key="s" * 1025), K0 + "key"),
    ("pem-huge", with_jwt(key="x" * 16385), K0 + "key"),
    ("with-secret", with_jwt(secret="s3cret"), K0 + "secret"),
    ("with-scopes", with_jwt(scopes=["delegate"]), K0 + "scopes"),
    ("claim-target", with_jwt(claims={"rating": "rating"}), K0 + "claims[...]"),
    ("claim-bad-name", with_jwt(claims={"r": "attributes.a b"}), K0 + "claims[...]"),
    ("claim-twice", with_jwt(claims={"a": "attributes.r", "b": "attributes.r"}), K0 + "claims.b"),
    ("issuer-empty", with_jwt(issuer=""), K0 + "issuer"),
    ("shared-with-algorithm", {"id": "a", "keys": [{"type": "shared-secret", "secret": "s",
                                                    "algorithm": "HS256"}]}, K0 + "algorithm"),
    ("shared-without-secret", {"id": "a", "keys": [{"type": "shared-secret"}]}, K0 + "secret"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "field"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_an_unusable_jwt_key_is_400_naming_the_field(
    admin: httpx.Client, body: dict[str, Any], field: str
) -> None:
    response = admin.post("/admin/projects", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "request.invalid"
    assert response.json()["error"]["details"]["field"] == field
    assert admin.get("/admin/projects").json()["projects"] == []


@pytest.mark.parametrize("case", ["not-pem", "hs256-short", "with-secret", "claim-twice"])
def test_a_dry_run_refuses_the_same_jwt_keys(admin: httpx.Client, case: str) -> None:
    body, field = next((c[1], c[2]) for c in INVALID if c[0] == case)
    response = admin.post("/admin/projects", json=body, params={"dryRun": "true"})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"]["field"] == field
    dry = admin.post("/admin/projects", json=with_jwt(), params={"dryRun": "true"})
    assert dry.status_code == 201
    assert dry.json()["keys"] == with_jwt()["keys"]
    assert admin.get("/admin/projects").json()["projects"] == []


def test_too_many_claims_is_400(admin: httpx.Client) -> None:
    claims = {f"c{i}": f"attributes.a{i}" for i in range(33)}
    response = admin.post("/admin/projects", json=with_jwt(claims=claims))
    assert response.json()["error"]["details"]["field"] == "$.keys[0].claims"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_jwt_key_of_each_algorithm_is_stored_and_reaches_the_directory(
    admin: httpx.Client, directory: ProjectDirectory, algorithm: Any
) -> None:
    key = {
        "type": "jwt",
        "algorithm": algorithm,
        "key": signer(algorithm).verifying,
        "issuer": "https://id.example.test",
        "audience": "game",
        "claims": CLAIMS,
    }
    body = {"id": "game", "keys": [key, {"type": "shared-secret", "secret": "bot-key"}]}
    response = admin.post("/admin/projects", json=body)
    assert response.status_code == 201, response.text
    assert response.json()["keys"] == body["keys"]
    assert admin.get("/admin/projects/game").json()["keys"] == body["keys"]
    assert directory.projects_for_issuer("https://id.example.test") == ["game"]


def test_a_patch_is_validated_like_a_create(admin: httpx.Client) -> None:
    assert admin.post("/admin/projects", json=with_jwt()).status_code == 201
    response = admin.patch("/admin/projects/a", json={"keys": with_jwt(key="nope")["keys"]})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["field"] == "$.keys[0].key"
    assert admin.get("/admin/projects/a").json()["keys"] == with_jwt()["keys"]


def test_an_hs256_key_is_never_the_management_key(
    config: ServerConfig, directory: ProjectDirectory
) -> None:
    long_key = "a-management-key-long-enough-for-hs256-4d2c"
    running = ServerThread(replace(config, management_key=long_key), directory)
    host, port = running.start().management or ("", 0)
    try:
        auth = {"Authorization": f"Bearer {long_key}"}
        with httpx.Client(base_url=f"http://{host}:{port}", headers=auth, timeout=10) as http:
            body = with_jwt(algorithm="HS256", key=long_key)
            response = http.post("/admin/projects", json=body)
            assert response.status_code == 400
            assert response.json()["error"]["details"]["field"] == "$.keys[0].key"
            assert "management key" in response.json()["error"]["message"]
            body = with_jwt(algorithm="HS256", key=long_key[::-1])
            assert http.post("/admin/projects", json=body).status_code == 201
    finally:
        running.stop()
