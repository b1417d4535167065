"""Generate N realistic task files (dependencies, phases, tags, bodies) for benchmarks.

Usage: ``python -m tools.bench.tasktool.generate N DIR [--seed S]`` writes
``DIR/.tasktool.yaml`` (phases and scopes), the task files under
``DIR/tasks/<group>/`` and 200 source files under ``DIR/src/`` (for ``todos``);
completed tasks older than the last tenth are archived under ``tasks/archive/``. The
same seed gives the same files.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field
from pathlib import Path

GROUPS = ("backend", "frontend", "infra", "docs", "data")
PHASES = ("foundation", "beta", "launch", "polish")
SCOPES = ("api", "db", "ui", "auth", "ci", "search", "billing", "sync")
TAGS = ("bug", "perf", "security", "ux", "refactor", "tests", "docs", "tech-debt", "mobile")
OWNERS = ("alice", "bob", "carol", "dave", "erin", "")
WORDS = [
    "add",
    "cache",
    "invalidation",
    "for",
    "user",
    "sessions",
    "fix",
    "flaky",
    "login",
    "test",
    "migrate",
    "billing",
    "tables",
    "refactor",
    "search",
    "index",
    "build",
    "dashboard",
    "widgets",
    "document",
    "sync",
    "api",
    "improve",
    "error",
    "messages",
    "remove",
    "legacy",
    "endpoints",
    "speed",
    "up",
    "startup",
    "paginate",
    "reports",
    "audit",
    "permissions",
    "rotate",
    "keys",
    "support",
    "dark",
    "mode",
    "upgrade",
    "dependencies",
    "split",
    "monolith",
    "module",
    "add",
    "retries",
    "to",
    "webhook",
]
STATUSES = (
    ["pending"] * 45
    + ["in-progress"] * 12
    + ["in-review"] * 5
    + ["blocked"] * 5
    + ["completed"] * 28
    + ["cancelled"] * 5
)
PRIORITIES = ("low", "medium", "medium", "high", "critical")
EFFORTS = ("small", "medium", "large")
TYPES = ("feature", "bug", "improvement", "chore", "docs")


@dataclass
class GeneratedTask:
    """One task's fields, format-neutral (also written as Backlog.md files by the bench)."""

    id: str
    title: str
    status: str
    priority: str
    effort: str
    type: str
    group: str
    phase: str
    created_at: str
    owner: str = ""
    dependencies: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    touches: list[str] = field(default_factory=list)
    body: str = ""
    archived: bool = False


def _body(rng: random.Random, title: str) -> str:
    steps = "\n".join(
        f"- [{'x' if rng.random() < 0.4 else ' '}] {' '.join(rng.sample(WORDS, 4))}"
        for _ in range(rng.randint(1, 5))
    )
    paragraph = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60)))
    return f"## Context\n\n{title.capitalize()}: {paragraph}.\n\n## Steps\n\n{steps}\n"


def generate_tasks(count: int, seed: int = 0) -> list[GeneratedTask]:
    """``count`` tasks with ids ``001``.. (padding 3), deterministic for a seed."""
    rng = random.Random(seed)
    tasks: list[GeneratedTask] = []
    for number in range(1, count + 1):
        task_id = f"{number:03d}"
        title = " ".join(rng.sample(WORDS, rng.randint(3, 7)))
        earlier = max(0, number - 1)
        dependencies = (
            sorted(
                {
                    f"{rng.randint(max(1, number - 50), earlier):03d}"
                    for _ in range(rng.randint(0, 3))
                }
            )
            if earlier and rng.random() < 0.6
            else []
        )
        status = rng.choice(STATUSES)
        tasks.append(
            GeneratedTask(
                id=task_id,
                title=title,
                status=status,
                priority=rng.choice(PRIORITIES),
                effort=rng.choice(EFFORTS),
                type=rng.choice(TYPES),
                group=rng.choice(GROUPS),
                phase=PHASES[min(len(PHASES) - 1, number * len(PHASES) // (count + 1))],
                created_at=f"2025-{1 + number % 12:02d}-{1 + number % 28:02d}",
                owner=rng.choice(OWNERS),
                dependencies=dependencies,
                tags=rng.sample(TAGS, rng.randint(0, 3)),
                touches=rng.sample(SCOPES, rng.randint(0, 2)),
                body=_body(rng, title),
                archived=status == "completed" and number < count * 0.9 and rng.random() < 0.3,
            )
        )
    return tasks


def _flow(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def task_markdown(task: GeneratedTask) -> str:
    """The task as a tasktool file: frontmatter (with a comment and an unknown key) and body."""
    lines = [
        "---",
        f"id: '{task.id}'",
        f"title: {task.title}",
        f"status: {task.status}",
        f"priority: {task.priority}",
        f"effort: {task.effort}",
        f"type: {task.type}",
        f"phase: {task.phase}",
        f"dependencies: {_flow(task.dependencies)}",
        f"tags: {_flow(task.tags)}",
        f"touches: {_flow(task.touches)}",
    ]
    if task.owner:
        lines.append(f"owner: {task.owner}")
    lines += [f"created_at: {task.created_at}", "# estimate from planning", "points: 3", "---"]
    return "\n".join(lines) + "\n" + task.body


CONFIG = (
    "dir: tasks\n"
    "phases:\n"
    + "".join(f"  - id: {p}\n    name: {p.capitalize()}\n" for p in PHASES)
    + "scopes:\n"
    + "".join(f"  {s}:\n    paths: [src/{s}]\n" for s in SCOPES)
)


def write_tasks(tasks: list[GeneratedTask], directory: Path) -> Path:
    """Write the config and the task files under ``directory``; returns the task dir."""
    task_dir = directory / "tasks"
    (directory / ".tasktool.yaml").parent.mkdir(parents=True, exist_ok=True)
    (directory / ".tasktool.yaml").write_text(CONFIG, encoding="utf-8")
    for task in tasks:
        folder = task_dir / "archive" / task.group if task.archived else task_dir / task.group
        folder.mkdir(parents=True, exist_ok=True)
        slug = "-".join(task.title.split())[:50]
        (folder / f"{task.id}-{slug}.md").write_text(task_markdown(task), encoding="utf-8")
    return task_dir


def write_sources(directory: Path, count: int = 200) -> None:
    """``count`` small Python modules under ``directory/src/`` with a TODO or FIXME each
    (what ``todos`` scans: its cost should follow these, not the tasks)."""
    for number in range(count):
        path = directory / "src" / SCOPES[number % len(SCOPES)] / f"module_{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        marker = "TODO" if number % 2 else "FIXME"
        body = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(20))
        path.write_text(f'"""Module {number}."""\n\n# {marker}: tidy {number}\n{body}')


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    write_tasks(generate_tasks(args.count, args.seed), args.directory)
    write_sources(args.directory)


if __name__ == "__main__":
    main()
