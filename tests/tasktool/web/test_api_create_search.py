"""Creating and searching tasks through the dashboard's API, and descriptions as Markdown,
over real sockets."""

from __future__ import annotations

import json

import pytest

from tasktool.web.markdown import markdown_html
from tests.tasktool.web.conftest import Dashboard

JSON = {"Content-Type": "application/json"}


def test_post_creates_a_task_as_add_does(dashboard: Dashboard) -> None:
    new = {
        "title": "Cache the index",
        "priority": "high",
        "status": "completed",
        "tags": ["perf", " ", "api"],
        "dependencies": ["001"],
        "owner": "",
        "group": "backend",
        "body": "Why: *slow*.\n",
    }
    with dashboard.client() as client:
        answer = client.post("/api/tasks", json=new)
        again = client.post("/api/tasks", json={"title": "Second"})
        shown = client.get("/api/tasks/006").json()
    assert answer.status_code == 201, answer.text
    created = answer.json()
    assert created["id"] == "006"
    assert again.json()["id"] == "007"
    assert created["tags"] == ["perf", "api"]
    assert created["owner"] is None
    assert created["completed_at"]  # the bookkeeping of add --status completed
    assert created["body"] == "Why: *slow*.\n"
    path = dashboard.tasks / "backend" / "006-cache-the-index.md"
    assert created["file_path"] == str(path)
    assert shown["dependencies"] == ["001"]
    text = path.read_text()
    assert "created_at:" in text
    assert "owner" not in text


def test_post_reports_every_bad_field_and_writes_nothing(dashboard: Dashboard) -> None:
    before = sorted(p.name for p in dashboard.tasks.rglob("*.md"))
    with dashboard.client() as client:
        bad = client.post(
            "/api/tasks",
            json={"status": "finished", "priority": 3, "colour": "red", "effort": "huge"},
        )
        unknown_dep = client.post("/api/tasks", json={"title": "x", "dependencies": ["404"]})
        outside = client.post("/api/tasks", json={"title": "x", "group": "../out"})
        not_object = client.post("/api/tasks", json=["title"])
        taken = client.post("/api/tasks", json={"title": "x", "id": "001"})
    assert bad.status_code == 400
    fields = bad.json()["error"]["details"]["fields"]
    assert {name: problem["code"] for name, problem in fields.items()} == {
        "title": "task.invalid_title",
        "status": "task.invalid_status",
        "priority": "task.invalid_value",
        "colour": "task.unknown_field",
        "effort": "task.invalid_effort",
    }
    assert unknown_dep.json()["error"]["code"] == "task.unknown_reference"
    assert outside.json()["error"]["code"] == "task.invalid_group"
    assert not_object.json()["error"]["code"] == "task.invalid_edit"
    assert taken.status_code == 409
    assert sorted(p.name for p in dashboard.tasks.rglob("*.md")) == before


def test_post_is_guarded_as_every_write(dashboard: Dashboard) -> None:
    body = json.dumps({"title": "From elsewhere"})
    with dashboard.client() as client:
        foreign = client.post(
            "/api/tasks", content=body, headers={**JSON, "Origin": "http://evil.example"}
        )
        form = client.post("/api/tasks", content=body, headers={"Content-Type": "text/plain"})
        host = client.post("/api/tasks", content=body, headers={**JSON, "Host": "evil.example"})
    assert foreign.json()["error"]["code"] == "web.origin_forbidden"
    assert form.status_code == 415
    assert host.json()["error"]["code"] == "web.host_forbidden"
    assert not list(dashboard.tasks.glob("006-*"))


def test_post_is_refused_read_only(readonly_dashboard: Dashboard) -> None:
    with readonly_dashboard.client() as client:
        answer = client.post("/api/tasks", json={"title": "No"})
        page = client.get("/").text
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "web.read_only"
    assert "data-create-form" not in page


def test_q_searches_titles_and_bodies_as_the_cli(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        body_hit = client.get("/api/tasks", params={"q": "ENDPOINT"}).json()
        both = client.get("/api/tasks", params={"q": "the"}).json()
        filtered = client.get("/api/tasks", params={"q": "the", "filter": "priority=critical"})
        nothing = client.get("/api/tasks", params={"q": "zebra"}).json()
    assert [(t["id"], t["score"]) for t in body_hit] == [("003", 1)]
    assert [(t["id"], t["score"]) for t in both] == [("001", 13), ("002", 13), ("004", 13)]
    assert [t["id"] for t in filtered.json()] == ["002"]
    assert nothing == []


def test_the_task_page_renders_markdown_without_raw_html(dashboard: Dashboard) -> None:
    evil = (
        "# Plan\n\n- **bold** item\n- [link](https://example.test/x)\n"
        "- [bad](javascript:alert(1))\n\n<script>alert(1)</script>\n\n"
        '<img src=x onerror="alert(1)">\n\n| a | b |\n|---|---|\n| 1 | 2 |\n'
    )
    with dashboard.client() as client:
        assert client.put("/api/tasks/001", json={"body": evil}).status_code == 200
        page = client.get("/tasks/001")
    html = page.text
    assert "<h3>Plan</h3>" in html  # below the page's h1 and the section's h2
    assert "<strong>bold</strong>" in html
    assert '<a href="https://example.test/x">link</a>' in html
    assert 'href="javascript' not in html  # the link is refused: its text stays text
    assert "<script>alert" not in html
    assert "&lt;script&gt;" in html
    assert "<img" not in html
    assert "<td>1</td>" in html
    assert "script-src" not in page.headers["content-security-policy"]  # default-src 'self'


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("*x*", "<p><em>x</em></p>"),
        ("<b>x</b>", "<p>&lt;b&gt;x&lt;/b&gt;</p>"),
        ("![i](data:text/html,x)", "<p>![i](data:text/html,x)</p>"),
        ("[a](vbscript:x)", "<p>[a](vbscript:x)</p>"),
        ("~~gone~~", "<p><s>gone</s></p>"),
        ("# a\n##### b", "<h3>a</h3>\n<h6>b</h6>"),
    ],
)
def test_markdown_fragments(text: str, html: str) -> None:
    assert markdown_html(text) == f'<div class="body markdown">\n{html}\n</div>'


def test_the_api_takes_status_names_and_bare_numbers_as_the_cli(dashboard: Dashboard) -> None:
    with dashboard.client() as client:
        made = client.post("/api/tasks", json={"title": "Named", "status": "done"})
        moved = client.put("/api/tasks/2", json={"status": "In Progress"})
    assert made.status_code == 201, made.text
    assert made.json()["status"] == "completed"
    assert moved.status_code == 200, moved.text
    assert (moved.json()["id"], moved.json()["status"]) == ("002", "in-progress")
    assert "status: in-progress" in dashboard.task_file("002").read_text()
