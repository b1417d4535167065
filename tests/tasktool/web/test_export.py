"""``web export`` in process: every link of every page it writes leads to a file it wrote."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from tasktool.config import Overrides
from tasktool.planning.repository import loader
from tasktool.web.export import export_site
from tests.tasktool.conftest import Project, task_text

HREF = re.compile(r'(?:href|data-href)="([^"#?]+)[^"]*"')


def test_every_link_of_the_export_leads_to_a_written_page(project: Project, tmp_path: Path) -> None:
    """Archived dependencies, unreadable task files and dangling references get pages."""
    project.config("dir: tasks\n")
    project.write("tasks/001-a.md", task_text("001", "A", dependencies=["'002'", "'009'"]))
    project.write("tasks/archive/002-b.md", task_text("002", "B", status="completed"))
    project.write("tasks/003-c.md", task_text("003", "C", parent="'007'"))
    project.write("tasks/007-broken.md", "---\nid: '007'\nstatus: [pending\n---\n")
    site = tmp_path / "site"
    export_site(loader(Overrides(config=str(project.root / ".tasktool.yaml"))), site)
    pages = sorted(site.rglob("*.html"))
    assert pages
    dangling = [
        f"{page.relative_to(site)} -> {target}"
        for page in pages
        for target in HREF.findall(page.read_text(encoding="utf-8"))
        if ":" not in target and not (page.parent / unquote(target)).resolve().is_file()
    ]
    assert dangling == []
    assert "task.broken" in (site / "tasks" / "007.html").read_text(encoding="utf-8")
    assert "task.not_found" in (site / "tasks" / "009.html").read_text(encoding="utf-8")
