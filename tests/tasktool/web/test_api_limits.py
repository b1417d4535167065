"""The API against oversized and hostile writes, over real sockets."""

from __future__ import annotations

import socket
from collections.abc import Iterator

from tasktool.model.limits import REQUEST_MAX, TITLE_MAX
from tests.tasktool.web.conftest import Dashboard

JSON = {"Content-Type": "application/json"}


def test_a_request_body_past_the_limit_is_413_and_writes_nothing(dashboard: Dashboard) -> None:
    before = dashboard.task_file("001").read_bytes()
    padding = b" " * (REQUEST_MAX + 1)

    def chunked() -> Iterator[bytes]:  # no Content-Length: the limit holds while reading
        yield b'{"owner": "x"'
        for start in range(0, len(padding), 1 << 20):
            yield padding[start : start + (1 << 20)]
        yield b"}"

    with dashboard.client() as client:
        declared = client.put("/api/tasks/001", content=b"{" + padding + b"}", headers=JSON)
    with dashboard.client() as client:
        streamed = client.put("/api/tasks/001", content=chunked(), headers=JSON)
    for answer in (declared, streamed):
        assert answer.status_code == 413, answer.text
        assert answer.json()["error"]["code"] == "web.too_large"
    assert dashboard.task_file("001").read_bytes() == before


def test_a_request_that_claims_a_huge_body_is_refused_before_it_is_sent(
    dashboard: Dashboard,
) -> None:
    with socket.create_connection((dashboard.host, dashboard.port), timeout=10) as sock:
        sock.sendall(
            b"PUT /api/tasks/001 HTTP/1.1\r\n"
            + f"Host: {dashboard.host}:{dashboard.port}\r\n".encode()
            + b"Content-Type: application/json\r\nContent-Length: 107374182400\r\n\r\n{"
        )
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            assert chunk, answer
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413")


def test_deeply_nested_json_is_400(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        answer = client.put("/api/tasks/001", content=b"[" * 100_000, headers=JSON)
        nested = client.put(
            "/api/tasks/001",
            content=b'{"tags": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            headers=JSON,
        )
    for response in (answer, nested):
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "web.invalid_json"


def test_oversized_fields_are_refused_each_with_its_code(dashboard: Dashboard) -> None:
    before = dashboard.task_file("001").read_bytes()
    with dashboard.client() as client:
        answer = client.put(
            "/api/tasks/001",
            json={"title": "t" * (TITLE_MAX + 1), "body": "b" * (2 << 20), "owner": "ok"},
        )
    assert answer.status_code == 400, answer.text
    fields = answer.json()["error"]["details"]["fields"]
    assert fields["title"]["code"] == fields["body"]["code"] == "task.too_large"
    assert "owner" not in fields
    assert dashboard.task_file("001").read_bytes() == before
