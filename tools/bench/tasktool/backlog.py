"""The same generated tasks written in Backlog.md's format, and its CLI installed via npm."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tools.bench.tasktool.generate import GeneratedTask

STATUS = {
    "pending": "To Do",
    "blocked": "To Do",
    "in-progress": "In Progress",
    "in-review": "In Progress",
    "completed": "Done",
    "cancelled": "Done",
}
CONFIG = """\
project_name: "bench"
default_status: "To Do"
statuses: ["To Do", "In Progress", "Done"]
labels: []
date_format: yyyy-mm-dd
max_column_width: 20
auto_open_browser: false
default_port: 6420
remote_operations: false
auto_commit: false
bypass_git_hooks: false
check_active_branches: true
active_branch_days: 30
task_prefix: "task"
"""


def _list(items: list[str]) -> str:
    return "[]" if not items else "".join(f"\n  - {item}" for item in items)


def backlog_markdown(task: GeneratedTask) -> str:
    """One task as a Backlog.md file (the frontmatter its ``task create`` writes)."""
    number = int(task.id)
    dependencies = [f"TASK-{int(dep)}" for dep in task.dependencies]
    assignee = [f"@{task.owner}"] if task.owner else []
    return (
        f"---\nid: TASK-{number}\ntitle: {task.title}\nstatus: {STATUS[task.status]}\n"
        f"assignee: {_list(assignee)}\ncreated_date: '{task.created_at} 10:00'\n"
        f"labels: {_list(task.tags)}\ndependencies: {_list(dependencies)}\n"
        f"priority: {'high' if task.priority == 'critical' else task.priority}\n"
        f"ordinal: {number * 1000}\n---\n\n## Description\n\n"
        f"<!-- SECTION:DESCRIPTION:BEGIN -->\n{task.body}<!-- SECTION:DESCRIPTION:END -->\n"
    )


def write_backlog(tasks: list[GeneratedTask], directory: Path) -> None:
    """A git repository with ``backlog/`` holding the tasks (archived ones under archive/)."""
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(directory)], check=True)
    root = directory / "backlog"
    for name in ("tasks", "drafts", "docs", "decisions", "completed", "archive/tasks"):
        (root / name).mkdir(parents=True, exist_ok=True)
    (root / "config.yml").write_text(CONFIG, encoding="utf-8")
    for task in tasks:
        folder = root / "archive" / "tasks" if task.archived else root / "tasks"
        name = f"task-{int(task.id)} - {'-'.join(task.title.split())}.md"
        (folder / name).write_text(backlog_markdown(task), encoding="utf-8")


def install_backlog(directory: Path) -> Path | None:
    """``npm install backlog.md`` into ``directory``; its ``backlog`` binary, or ``None``."""
    binary = directory / "node_modules" / ".bin" / "backlog"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "backlog.md"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return binary if done.returncode == 0 and binary.exists() else None
