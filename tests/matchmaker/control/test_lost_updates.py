"""Read-modify-write clients that send ``If-Match`` and retry on 412 lose no update."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from matchmaker.config import ServerConfig

from .conftest import KEY

CLIENTS = 20


@pytest.fixture
def config(store_url: str) -> ServerConfig:
    return ServerConfig(port=0, management_port=0, management_key=KEY, store_url=store_url)


def append_policy(base_url: str, name: str, start: threading.Barrier) -> None:
    """GET the Project, append one policy, PATCH it back with If-Match; retry on 412."""
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=30) as http:
        start.wait()
        while True:
            read = http.get("/admin/projects/shared")
            policies = [*read.json()["policies"], {"name": name, "mode": "auto", "groupSize": 2}]
            written = http.patch(
                "/admin/projects/shared",
                json={"policies": policies},
                headers={"If-Match": read.headers["ETag"]},
            )
            if written.status_code != 412:
                assert written.status_code == 200, written.text
                return


def test_twenty_concurrent_read_append_patch_clients_keep_all_twenty_policies(
    admin: httpx.Client, base_url: str
) -> None:
    assert admin.post("/admin/projects", json={"id": "shared"}).status_code == 201
    start = threading.Barrier(CLIENTS)
    with ThreadPoolExecutor(CLIENTS) as pool:
        futures = [pool.submit(append_policy, base_url, f"p{i:02d}", start) for i in range(CLIENTS)]
        for future in futures:
            future.result()
    names = sorted(p["name"] for p in admin.get("/admin/projects/shared").json()["policies"])
    assert names == [f"p{i:02d}" for i in range(CLIENTS)]
