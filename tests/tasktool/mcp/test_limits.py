"""The MCP tools against an attacker's arguments: oversized fields, a group linked out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent

from tasktool.config import Overrides
from tasktool.mcp.server import create_server
from tasktool.planning.repository import loader
from tests.tasktool.conftest import Project
from tests.tasktool.web.conftest import seed_tasks


@pytest.fixture
def tasks(project: Project) -> Path:
    return seed_tasks(project)


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.glob("*.md")}


def _error_text(result: Any) -> str:
    assert result.is_error, result
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


async def test_oversized_arguments_are_refused(project: Project, tasks: Path) -> None:
    before = _files(tasks)
    server = create_server(loader(Overrides(config=str(project.root / ".tasktool.yaml"))))
    async with Client(server) as client:
        title = await client.call_tool("add", {"title": "t" * 1_000_000})
        body = await client.call_tool("add", {"title": "ok", "body": "b" * 20_000_000})
        edit = await client.call_tool("set", {"id": "003", "body": "b" * 20_000_000})
        owner = await client.call_tool("set", {"id": "003", "owner": "o" * 1_000_000})
    for result in (title, body, edit, owner):
        assert _error_text(result).endswith("[task.too_large]")
    assert _files(tasks) == before


def _linked_folder(link: Path, target: Path) -> Path:
    target.mkdir()
    link.symlink_to(target)
    return target


async def test_a_group_linked_out_is_refused(project: Project, tasks: Path, tmp_path: Path) -> None:
    outside = _linked_folder(tasks / "lnk", tmp_path / "outside")
    server = create_server(loader(Overrides(config=str(project.root / ".tasktool.yaml"))))
    async with Client(server) as client:
        result = await client.call_tool("add", {"title": "Out", "group": "lnk"})
    assert _error_text(result).endswith("[task.invalid_group]")
    assert _files(outside) == {}
