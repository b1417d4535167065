"""The MCP tools in-process (``mcp.Client(server)``) and over real stdio (``tasktool mcp``)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from tasktool.config import Overrides
from tasktool.mcp.server import create_server
from tasktool.planning.repository import loader
from tests.tasktool.conftest import Project
from tests.tasktool.web.conftest import seed_tasks

TOOLS = {
    *("list", "get", "next", "set", "add", "validate", "graph", "tracks"),
    *("search", "worklog", "archive", "complete", "board", "stats"),
}


@pytest.fixture
def tasks(project: Project) -> Path:
    return seed_tasks(project)


def _text(result: Any) -> str:
    """The text of a tool result's first (text) content block."""
    content = result.content[0]
    assert isinstance(content, TextContent), content
    return content.text


def _data(result: Any) -> Any:
    assert not result.is_error, _text(result)
    return json.loads(_text(result))


async def test_every_tool_in_process(project: Project, tasks: Path) -> None:
    server = create_server(loader(Overrides(config=str(project.root / ".tasktool.yaml"))))
    async with Client(server) as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        assert all(tool.description for tool in listed.tools)

        pending = _data(await client.call_tool("list", {"filter": ["status=pending"]}))
        assert [t["id"] for t in pending["tasks"]] == ["002", "003", "005"]
        detail = _data(await client.call_tool("get", {"id": "002"}))
        assert detail["dependents"] == ["003"]
        ranked = _data(await client.call_tool("next", {"limit": 0}))
        assert [t["id"] for t in ranked["tasks"]] == ["001", "005"]

        done = _data(
            await client.call_tool("set", {"id": "001", "status": "completed", "add_tags": ["x"]})
        )
        assert done["status"] == "completed"
        assert done["completed_at"]
        assert done["tags"] == ["api", "x"]
        assert "status: completed" in (tasks / "001-task.md").read_text()
        after = _data(await client.call_tool("next", {}))
        assert after["tasks"][0]["id"] == "002"  # its dependency is done now

        added = _data(
            await client.call_tool(
                "add", {"title": "From an agent", "priority": "high", "dependencies": ["002"]}
            )
        )
        assert added["id"] == "006"
        assert (tasks / "006-from-an-agent.md").exists()

        report = _data(await client.call_tool("validate", {}))
        assert report["valid"] is True
        graph = _data(await client.call_tool("graph", {}))
        assert {"from": "002", "to": "006"} in graph["edges"]
        mermaid = _data(await client.call_tool("graph", {"format": "mermaid", "root": "002"}))
        assert mermaid["text"].startswith("graph")
        tracks = _data(await client.call_tool("tracks", {"strict_phases": False}))
        assert "tracks" in tracks


async def test_errors_are_tool_errors_with_their_code(project: Project, tasks: Path) -> None:
    before = (tasks / "002-task.md").read_bytes()
    server = create_server(loader(Overrides(config=str(project.root / ".tasktool.yaml"))))
    async with Client(server) as client:
        missing = await client.call_tool("get", {"id": "999"})
        bad = await client.call_tool("set", {"id": "002", "effort": "huge"})
        nothing = await client.call_tool("set", {"id": "002"})
        bad_filter = await client.call_tool("list", {"filter": ["colour=red"]})
    assert missing.is_error
    assert "[task.not_found]" in _text(missing)
    assert bad.is_error
    assert "[task.invalid_effort]" in _text(bad)
    assert nothing.is_error
    assert bad_filter.is_error
    assert "[filter.field]" in _text(bad_filter)
    assert (tasks / "002-task.md").read_bytes() == before


async def test_unknown_arguments_are_refused_by_name(project: Project, tasks: Path) -> None:
    """Every schema says additionalProperties: false, and a call with an argument the tool
    does not take is a tool error naming it (a typo was dropped silently), writing nothing."""
    before = (tasks / "002-task.md").read_bytes()
    server = create_server(loader(Overrides(config=str(project.root / ".tasktool.yaml"))))
    async with Client(server) as client:
        listed = await client.list_tools()
        typo = await client.call_tool("set", {"id": "002", "add_tag": ["x"], "status": "blocked"})
        alone = await client.call_tool("set", {"id": "002", "add_tag": ["x"]})
        extra = await client.call_tool("validate", {"strict": True})
    assert all(tool.input_schema.get("additionalProperties") is False for tool in listed.tools)
    for result in (typo, alone):
        assert result.is_error
        assert "'add_tag' (did you mean 'add_tags'?)" in _text(result)
        assert _text(result).endswith("[usage]")
    assert extra.is_error
    assert "validate does not take 'strict'" in _text(extra)
    assert (tasks / "002-task.md").read_bytes() == before


async def test_tool_arguments_are_flat_on_the_wire(project: Project, tasks: Path) -> None:
    """Each tool's schema comes from one arguments object, and that object's fields are
    the tool's top-level arguments: no nesting under a parameter name, no references; a
    value of the wrong type is refused and writes nothing."""
    before = (tasks / "002-task.md").read_bytes()
    server = create_server(loader(Overrides(config=str(project.root / ".tasktool.yaml"))))
    async with Client(server) as client:
        schemas = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        wrong = await client.call_tool("set", {"id": "002", "tags": "not-a-list"})
        listed = _data(await client.call_tool("list", {"limit": 1, "sort": "-id"}))
    lists = ("dependencies", "tags", "touches", "context", "pr")
    assert sorted(schemas["set"]["properties"]) == sorted(
        [
            *("id", "title", "status", "priority", "effort", "type", "owner", "phase"),
            *("parent", "external_id", "created_at", "completed_at", "cancelled_at", "body"),
            *(name for field in lists for name in (field, f"add_{field}", f"remove_{field}")),
        ]
    )
    assert schemas["set"]["required"] == ["id"]
    assert schemas["add"]["required"] == ["title"]
    assert schemas["validate"]["properties"] == {}
    assert not any("$defs" in schema or "$ref" in str(schema) for schema in schemas.values())
    assert wrong.is_error
    assert "tags" in _text(wrong)
    assert (tasks / "002-task.md").read_bytes() == before
    assert [task["id"] for task in listed["tasks"]] == ["005"]


async def test_every_tool_over_stdio(project: Project, tasks: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TASKTOOL_")},
        **project.env,
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tasktool", "mcp"], cwd=str(project.root), env=env
    )
    async with Client(params, read_timeout_seconds=30) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == TOOLS
        calls = {
            "list": {},
            "get": {"id": "003"},
            "next": {},
            "set": {"id": "003", "owner": "zoe"},
            "add": {"title": "Over stdio"},
            "validate": {},
            "graph": {"format": "dot"},
            "tracks": {},
            "search": {"text": "endpoint"},
            "board": {"group_by": "priority"},
            "stats": {},
            "worklog": {"id": "3"},
        }
        results = {name: _data(await client.call_tool(name, args)) for name, args in calls.items()}
    assert results["get"]["title"] == "Document it"
    assert results["set"]["owner"] == "zoe"
    assert "owner: zoe  # who writes it" in (tasks / "003-task.md").read_text()
    assert results["add"]["id"] == "006"
    assert results["graph"]["text"].startswith("digraph")
    assert results["list"]["count"] == 5
    assert [task["id"] for task in results["search"]["tasks"]] == ["003"]
    assert results["board"]["group_by"] == "priority"
    assert results["stats"]["total"] == 6
    assert results["worklog"] == {"task_id": "003", "entries": []}


def test_mcp_refuses_a_bad_next_section(project: Project, tasks: Path) -> None:
    import subprocess

    project.config("dir: tasks\nnext:\n  unphased: sometimes\n")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TASKTOOL_")}, **project.env}
    done = subprocess.run(
        [sys.executable, "-m", "tasktool", "mcp"],
        cwd=project.root,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "[config.next." in done.stderr


async def test_the_tools_the_cli_has_beside_the_core_ones(project: Project, tasks: Path) -> None:
    project.config("dir: tasks\nworklogs: true\n")
    server = create_server(loader(Overrides(config=str(project.root / ".tasktool.yaml"))))
    async with Client(server) as client:
        found = _data(await client.call_tool("search", {"text": "every endpoint"}))
        assert (found["count"], found["tasks"][0]["id"]) == (1, "003")
        assert found["tasks"][0]["score"] > 0
        narrowed = _data(
            await client.call_tool("search", {"text": "the", "filter": ["priority=critical"]})
        )
        assert [task["id"] for task in narrowed["tasks"]] == ["002"]
        bad = await client.call_tool("search", {"text": "x", "filter": ["colour=red"]})
        assert bad.is_error
        assert "[filter.field]" in _text(bad)

        # A bare number names the task, as in the CLI (set {"id": "2"}).
        assert _data(await client.call_tool("set", {"id": "2", "owner": "bo"}))["id"] == "002"
        logged = _data(await client.call_tool("worklog", {"id": "2", "add": "started"}))
        assert logged["task_id"] == "002"
        assert [entry["content"] for entry in logged["entries"]] == ["started"]
        empty = await client.call_tool("worklog", {"id": "2", "add": "  "})
        assert "[worklog.empty]" in _text(empty)

        finished = _data(await client.call_tool("complete", {"id": "5"}))
        assert (finished["id"], finished["status"]) == ("005", "completed")
        assert finished["completed_at"]
        unresolved = await client.call_tool("archive", {"ids": ["2"]})
        assert unresolved.is_error
        assert "[task.unresolved]" in _text(unresolved)
        planned = _data(await client.call_tool("archive", {"ids": ["5"], "dry_run": True}))
        assert planned["dry_run"] is True
        assert (tasks / "005-task.md").exists()
        moved = _data(await client.call_tool("archive", {"ids": ["5"]}))
        assert [row["id"] for row in moved["archived"]] == ["005"]
        assert not (tasks / "005-task.md").exists()
        assert (tasks / "archive" / "005-task.md").exists()

        board = _data(await client.call_tool("board", {}))
        assert [column["name"] for column in board["columns"]][:3] == [
            "pending",
            "blocked",
            "in-progress",
        ]
        stats = _data(await client.call_tool("stats", {}))
        assert stats["archived"] == 1
        wrong = await client.call_tool("board", {"group_by": "colour"})
        assert wrong.is_error


def _request(number: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": params}


def _failed_call_stderr(project: Project, *flags: str) -> str:
    """stderr of ``tasktool [flags] mcp`` over real stdio after one failing tool call."""
    import subprocess

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TASKTOOL_")}, **project.env}
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    messages = [
        _request(1, "initialize", hello),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _request(2, "tools/call", {"name": "get", "arguments": {"id": "999"}}),
    ]
    with subprocess.Popen(
        [sys.executable, "-m", "tasktool", *flags, "mcp"],
        cwd=project.root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        for message in messages:
            process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        answers = [json.loads(process.stdout.readline()) for _ in range(2)]
        assert answers[1]["result"]["isError"] is True
        _out, err = process.communicate(timeout=60)  # closes stdin: the server ends
    return err


def test_a_failed_tool_call_is_one_line_on_stderr_and_none_when_quiet(
    project: Project, tasks: Path
) -> None:
    err = _failed_call_stderr(project)
    lines = [line for line in err.splitlines() if "task.not_found" in line or "failed" in line]
    assert len(lines) == 1, err
    assert "[task.not_found]" in lines[0]
    assert lines[0].startswith("tasktool mcp: ")
    assert err.count("\n") == 1, err
    assert _failed_call_stderr(project, "-q") == ""
