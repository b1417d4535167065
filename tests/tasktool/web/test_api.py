"""The JSON API over real sockets: reads, the one write, and its guards."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.tasktool.web.conftest import Dashboard

JSON = {"Content-Type": "application/json"}


def test_list_filters_as_the_cli(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        everything = client.get("/api/tasks").json()
        pending = client.get("/api/tasks", params={"filter": "status=pending"}).json()
        api_high = client.get(
            "/api/tasks", params=[("filter", "tags=api"), ("filter", "priority>=high")]
        ).json()
        sorted_desc = client.get("/api/tasks", params={"sort": "-id", "limit": "2"}).json()
    assert [t["id"] for t in everything] == ["001", "002", "003", "004", "005"]
    assert [t["id"] for t in pending] == ["002", "003", "005"]
    assert [t["id"] for t in api_high] == ["001", "002"]
    assert [t["id"] for t in sorted_desc] == ["005", "004"]
    assert "body" not in everything[0]


def test_bad_filter_and_parameters_are_400(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        unknown_field = client.get("/api/tasks", params={"filter": "colour=red"})
        bad_limit = client.get("/api/tasks", params={"limit": "many"})
        bad_group = client.get("/api/board", params={"group_by": "colour"})
        bad_bool = client.get("/api/next", params={"quick_wins": "perhaps"})
    assert unknown_field.status_code == 400
    assert unknown_field.json()["error"]["code"] == "filter.field"
    assert bad_limit.json()["error"]["code"] == "web.invalid_parameter"
    assert bad_group.status_code == bad_bool.status_code == 400


def test_get_has_body_both_directions_children_and_404(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        two = client.get("/api/tasks/002").json()
        four = client.get("/api/tasks/004").json()
        three = client.get("/api/tasks/003").json()
        missing = client.get("/api/tasks/999")
    assert two["dependencies"] == ["001"]
    assert two["dependents"] == ["003"]
    assert two["unmet_dependencies"] == ["001"]
    assert two["blocked"] is True
    assert [child["id"] for child in four["children"]] == ["005"]
    assert three["body"].strip() == "# Docs\n\nEvery endpoint."
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "task.not_found"


def test_put_edits_the_file_with_the_cli_bookkeeping(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        answer = client.put(
            "/api/tasks/003",
            json={"status": "completed", "tags": ["docs", "api"], "owner": "", "body": "Done."},
        )
    assert answer.status_code == 200, answer.text
    updated = answer.json()
    assert updated["status"] == "completed"
    assert updated["completed_at"]
    assert updated["tags"] == ["docs", "api"]
    assert updated["owner"] is None
    text = dashboard.task_file("003").read_text()
    assert "status: completed" in text
    assert "completed_at:" in text
    assert "custom_key: kept" in text  # unknown keys survive
    assert "owner:" not in text  # "" clears
    assert text.rstrip().endswith("Done.")


def test_put_rejects_bad_fields_each_with_its_code_and_writes_nothing(
    dashboard: Dashboard,
) -> None:
    before = dashboard.task_file("002").read_bytes()
    with dashboard.client() as client:
        answer = client.put(
            "/api/tasks/002",
            json={"status": "finished", "effort": "huge", "dependencies": ["404"], "colour": 1},
        )
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "task.invalid_fields"
    assert {field: item["code"] for field, item in error["details"]["fields"].items()} == {
        "status": "task.invalid_status",
        "effort": "task.invalid_effort",
        "dependencies": "task.unknown_reference",
        "colour": "task.unknown_field",
    }
    assert dashboard.task_file("002").read_bytes() == before


def test_put_unknown_task_is_404_and_bad_json_400(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        missing = client.put("/api/tasks/999", json={"status": "completed"})
        garbage = client.put("/api/tasks/001", content=b"{not json", headers=JSON)
        not_object = client.put("/api/tasks/001", json=["status"])
    assert missing.status_code == 404
    assert garbage.status_code == 400
    assert garbage.json()["error"]["code"] == "web.invalid_json"
    assert not_object.json()["error"]["code"] == "task.invalid_edit"


@pytest.mark.parametrize(
    ("method", "path"),
    [("DELETE", "/api/tasks"), ("DELETE", "/api/tasks/001"), ("PATCH", "/api/tasks/001"),
     ("POST", "/api/next"), ("PUT", "/api/stats")],
)  # fmt: skip
def test_a_method_a_path_does_not_take_is_a_coded_405(
    dashboard: Dashboard, method: str, path: str
) -> None:
    with dashboard.client() as client:
        answer = client.request(method, path, json={}, headers={"Origin": dashboard.url})
    assert answer.status_code == 405
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"]["code"] == "web.method_not_allowed"
    assert answer.headers["allow"]


def test_a_write_that_is_not_json_is_a_coded_415(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        answer = client.put("/api/tasks/001", content=b"x", headers={"Content-Type": "text/plain"})
    assert answer.status_code == 415
    assert answer.json()["error"]["code"] == "web.unsupported_media_type"


def test_readonly_put_is_403_and_writes_nothing(readonly_dashboard: Dashboard) -> None:
    before = readonly_dashboard.task_file("001").read_bytes()
    with readonly_dashboard.client() as client:
        answer = client.put("/api/tasks/001", json={"status": "completed"})
        page = client.get("/tasks/001").text
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "web.read_only"
    assert readonly_dashboard.task_file("001").read_bytes() == before
    assert "data-edit-form" not in page
    assert "read-only" in page


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.2:{port}"])
def test_foreign_host_is_refused(dashboard: Dashboard, host: str) -> None:
    with dashboard.client(Host=host.format(port=dashboard.port)) as client:
        read = client.get("/api/tasks")
        page = client.get("/")
    assert read.status_code == page.status_code == 403
    assert read.json()["error"]["code"] == "web.host_forbidden"


def test_loopback_names_are_accepted(dashboard: Dashboard) -> None:
    for host in (f"localhost:{dashboard.port}", f"127.0.0.1:{dashboard.port}"):
        with dashboard.client(Host=host) as client:
            assert client.get("/api/stats").status_code == 200


def test_foreign_origin_and_non_json_writes_are_refused(dashboard: Dashboard) -> None:
    before = dashboard.task_file("001").read_bytes()
    body = json.dumps({"status": "completed"})
    with dashboard.client() as client:
        foreign = client.put(
            "/api/tasks/001", content=body, headers={**JSON, "Origin": "http://evil.example"}
        )
        null_origin = client.put("/api/tasks/001", content=body, headers={**JSON, "Origin": "null"})
        cross_site = client.put(
            "/api/tasks/001", content=body, headers={**JSON, "Sec-Fetch-Site": "cross-site"}
        )
        form = client.put("/api/tasks/001", content=body, headers={"Content-Type": "text/plain"})
        preflight = client.options(
            "/api/tasks/001",
            headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "PUT"},
        )
    assert foreign.status_code == null_origin.status_code == cross_site.status_code == 403
    assert foreign.json()["error"]["code"] == "web.origin_forbidden"
    # Refused before its body is read: the connection is not reused for the next request.
    assert foreign.headers["connection"] == form.headers["connection"] == "close"
    assert form.status_code == 415
    assert form.json()["error"]["code"] == "web.unsupported_media_type"
    assert not any(key.lower().startswith("access-control-") for key in preflight.headers)
    assert dashboard.task_file("001").read_bytes() == before
    with dashboard.client() as client:
        same_origin = client.put(
            "/api/tasks/001", content=body, headers={**JSON, "Origin": dashboard.url}
        )
    assert same_origin.status_code == 200


def test_no_cors_and_security_headers_on_every_answer(dashboard: Dashboard) -> None:
    with dashboard.client(Origin="http://evil.example") as client:
        answers = [client.get(path) for path in ("/", "/api/tasks", "/static/app.js")]
    for answer in answers:
        assert answer.status_code == 200
        assert "access-control-allow-origin" not in answer.headers
        assert "default-src 'self'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_concurrent_puts_lose_nothing(dashboard: Dashboard) -> None:
    edits: list[dict[str, Any]] = [
        {"title": "Renamed"},
        {"status": "in-progress"},
        {"priority": "high"},
        {"effort": "large"},
        {"type": "feature"},
        {"owner": "bo"},
        {"phase": "later"},
        {"tags": ["x", "y"]},
        {"body": "New body."},
    ]

    def put(edit: dict[str, object]) -> int:
        with dashboard.client() as client:
            return client.put("/api/tasks/005", json=edit).status_code

    with ThreadPoolExecutor(len(edits)) as pool:
        statuses = list(pool.map(put, edits))
    assert statuses == [200] * len(edits)
    with dashboard.client() as client:
        final = client.get("/api/tasks/005").json()
    for edit in edits:
        for field, value in edit.items():
            expected = value if field != "body" else "New body."
            assert (final[field].strip() if field == "body" else final[field]) == expected
    assert final["parent"] == "004"  # untouched fields stay


def test_next_is_the_cli_ranking(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        api = client.get("/api/next", params={"limit": "0"}).json()
        loose = client.get("/api/next", params={"strict_phases": "false"}).json()
    cli = subprocess.run(
        [sys.executable, "-m", "tasktool", "next", "--limit", "0", "--format", "json"],
        cwd=dashboard.project.root,
        env={**dashboard.project.env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert api == json.loads(cli.stdout)
    assert [item["id"] for item in api] == ["001", "005"]
    assert loose
    assert all("score" in item for item in loose)


def test_read_endpoints_answer_their_documents(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        board = client.get("/api/board", params={"group_by": "priority"}).json()
        graph = client.get("/api/graph", params={"root": "002", "upstream": "true"}).json()
        stats = client.get("/api/stats").json()
        tracks = client.get("/api/tracks").json()
        report = client.get("/api/validate").json()
        config = client.get("/api/config").json()
    assert [c["name"] for c in board["columns"]][:4] == ["low", "medium", "high", "critical"]
    assert {n["id"] for n in graph["nodes"]} == {"001", "002"}
    assert graph["edges"] == [{"from": "001", "to": "002"}]
    assert stats["total"] == 5
    assert stats["by_status"]["completed"] == 1
    assert "tracks" in tracks
    assert "flexible" in tracks
    assert report["valid"] is True
    assert config["settings"]["dir"]["source"] == "file"


def test_pages_render(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        pages = {
            path: client.get(path)
            for path in ("/", "/tasks/002", "/board?group_by=owner", "/graph", "/next", "/validate")
        }
        missing = client.get("/tasks/999")
        nowhere = client.get("/nowhere")
    for path, page in pages.items():
        assert page.status_code == 200, path
        assert page.headers["content-type"].startswith("text/html")
    assert "Write the server" in pages["/"].text
    assert 'data-id="005"' in pages["/"].text
    assert "data-edit-form" in pages["/tasks/002"].text
    assert "<svg" in pages["/graph"].text
    assert missing.status_code == 404
    assert "task.not_found" in missing.text
    assert nowhere.status_code == 404


def test_events_announce_an_on_disk_edit(dashboard: Dashboard) -> None:
    with (
        httpx.Client(base_url=dashboard.url, timeout=httpx.Timeout(10, read=10)) as client,
        client.stream("GET", "/api/events") as stream,
    ):
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        events = []
        for line in lines:
            if line.startswith("event: "):
                events.append(line.removeprefix("event: "))
                if events[-1] == "ready":
                    path = dashboard.task_file("004")
                    path.write_text(path.read_text().replace("Fix the", "Fixed the"))
                elif events[-1] == "change":
                    break
    assert events == ["ready", "change"]


def test_events_ignore_the_tools_own_state(dashboard: Dashboard) -> None:
    """A write under .tasktool/ (cache, locks) is not a change: then a task edit is the first."""
    with (
        httpx.Client(base_url=dashboard.url, timeout=httpx.Timeout(10, read=10)) as client,
        client.stream("GET", "/api/events") as stream,
    ):
        data = []
        for line in stream.iter_lines():
            if line == "event: ready":
                state = dashboard.tasks / ".tasktool" / "noise.md"
                state.parent.mkdir(exist_ok=True)
                state.write_text("x")
                (dashboard.tasks / "notes.txt").write_text("not a task")
                dashboard.task_file("001").write_text(dashboard.task_file("001").read_text())
            if line.startswith("data: "):
                data.append(int(line.removeprefix("data: ")))
                if len(data) == 2:
                    break
    assert data == [0, 1]


def test_the_task_page_shows_acceptance_criteria_and_their_progress(
    dashboard: Dashboard,
) -> None:
    checklist = (
        "## Acceptance Criteria\n<!-- AC:BEGIN -->\n- [x] #1 Builds\n"
        "- [ ] #2 Tested & <b>reviewed</b>\n- [x] #3 Documented\n<!-- AC:END -->\n"
    )
    path = dashboard.task_file("005")
    path.write_text(path.read_text() + checklist, encoding="utf-8")
    with dashboard.client() as client:
        detail = client.get("/api/tasks/005").json()
        page = client.get("/tasks/005").text
        plain = client.get("/tasks/004").text
    assert detail["acceptance"]["done"] == 2
    assert detail["acceptance"]["total"] == 3
    assert "<dt>acceptance</dt><dd>2/3 done</dd>" in page
    assert page.count('<input type="checkbox" disabled checked>') == 2
    assert "Tested &amp; &lt;b&gt;reviewed&lt;/b&gt;" in page
    assert "Acceptance criteria" not in plain
