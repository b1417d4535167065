"""The planning commands' exact output on a fixed repository, pinned byte for byte.

``next``, ``validate``, ``board`` and ``stats`` have fast paths for large task sets;
their output must not change with them. The repository is built from a seeded
generator (dependencies, parents, a cycle, archived tasks, unknown values, a duplicate
id), each command runs as a whole process with its output piped (no terminal), and
stdout + stderr + exit code are compared with ``golden/<case>.txt``.

After an intended change of output, regenerate the files with
``TASKTOOL_GOLDEN_UPDATE=1 pytest tests/tasktool/planning/test_planning_golden.py``
and review the diff.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"

CONFIG = """\
dir: tasks
phases:
  - {id: foundation, name: Foundation}
  - {id: beta, name: Beta}
  - {id: launch, name: Launch}
scopes:
  api: {paths: [src/api]}
  db: {paths: [src/db]}
  ui: {paths: [src/ui]}
"""

CASES: dict[str, tuple[str, ...]] = {
    "next": ("next",),
    "next-all-json": ("next", "--limit", "0", "--format", "json"),
    "next-loose-phases": ("next", "--limit", "8", "--strict-phases", "false"),
    "next-quick-wins": ("next", "--quick-wins", "--format", "yaml"),
    "next-filtered": ("next", "-f", "tag:ux"),
    "validate": ("validate",),
    "validate-json": ("validate", "--format", "json"),
    "board": ("board",),
    "board-json": ("board", "--format", "json"),
    "board-tag": ("board", "--group-by", "tag"),
    "board-phase-yaml": ("board", "--group-by", "phase", "--format", "yaml"),
    "board-owner": ("board", "--group-by", "owner"),
    "stats": ("stats",),
    "stats-json": ("stats", "--format", "json"),
}


def _task(rng: random.Random, number: int, count: int, forced: list[int]) -> str:
    """One task file's text; values drawn from small vocabularies, a few outside them;
    ``forced``: dependencies it has in any case."""
    status = rng.choice(
        ["pending"] * 5 + ["in-progress", "in-review", "blocked", "completed", "cancelled"]
    )
    lines = [
        "---",
        f"id: T-{number}",
        f"title: Task {number} {rng.choice(['fix', 'add', 'tune'])} {rng.choice(['ui', 'db'])}",
        f"status: {status}",
        f"priority: {rng.choice(['low', 'medium', 'high', 'critical', 'urgent'])}",
        f"type: {rng.choice(['feature', 'bug', 'chore'])}",
        f"created: 2026-01-{1 + number % 28:02d}",
    ]
    if rng.random() < 0.7:
        lines.append(f"effort: {rng.choice(['small', 'medium', 'large', 'huge'])}")
    if rng.random() < 0.7:
        lines.append(f"phase: {rng.choice(['foundation', 'beta', 'launch', 'later'])}")
    if rng.random() < 0.6:
        lines.append(f"owner: {rng.choice(['alice', 'bob', 'carol'])}")
    tags = rng.sample(["ux", "perf", "bug", "docs"], rng.randint(0, 2))
    if tags:
        lines.append(f"tags: [{', '.join(tags)}]")
    touches = rng.sample(["api", "db", "ui", "mobile"], rng.randint(0, 2))
    if touches:
        lines.append(f"touches: [{', '.join(touches)}]")
    earlier = list(range(1, number))
    deps = rng.sample(earlier, min(len(earlier), rng.choice([0, 0, 1, 1, 2, 3]))) + forced
    if rng.random() < 0.05:
        deps.append(count + 7)  # a dependency on no task
    if deps:
        lines.append(f"dependencies: [{', '.join(f'T-{dep}' for dep in deps)}]")
    if earlier and rng.random() < 0.2:
        lines.append(f"parent: T-{rng.choice(earlier)}")
    lines += ["---", "", f"Body of task {number}.", ""]
    return "\n".join(lines)


def write_repository(root: Path, count: int = 60, seed: int = 21) -> None:
    """``count`` tasks under ``tasks/`` (every ninth archived), a dependency cycle between
    the last two, and a second file holding ``T-3``'s id."""
    rng = random.Random(seed)
    (root / ".git").mkdir(parents=True)
    (root / ".tasktool.yaml").write_text(CONFIG, encoding="utf-8")
    cycle = {count - 1: [count], count: [count - 1]}
    for number in range(1, count + 1):
        folder = root / "tasks" / ("archive" if number % 9 == 0 else rng.choice(["a", "b"]))
        folder.mkdir(parents=True, exist_ok=True)
        text = _task(rng, number, count, cycle.get(number, []))
        (folder / f"T-{number}-task.md").write_text(text, encoding="utf-8")
    copy = "---\nid: T-3\ntitle: Copy of three\nstatus: pending\n---\n"
    (root / "tasks" / "b" / "T-3-copy.md").write_text(copy, encoding="utf-8")


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("golden") / "repo"
    write_repository(root)
    return root


def run(root: Path, args: tuple[str, ...]) -> str:
    """stdout, stderr and exit code of ``tasktool ARGS`` as one text (``<root>`` for the
    repository's path)."""
    home = root.parent / "home"
    home.mkdir(exist_ok=True)
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
    if "PYTHONPATH" in os.environ:  # to run another tree's tasktool (regenerating from main)
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    done = subprocess.run(
        [sys.executable, "-m", "tasktool", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    command = f"$ tasktool {' '.join(args)}\n"
    text = f"{command}{done.stdout}--- stderr\n{done.stderr}--- exit {done.returncode}\n"
    return text.replace(str(root), "<root>")


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_is_unchanged(repository: Path, case: str) -> None:
    got = run(repository, CASES[case])
    path = GOLDEN / f"{case}.txt"
    if os.environ.get("TASKTOOL_GOLDEN_UPDATE"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(got, encoding="utf-8")
    assert got == path.read_text(encoding="utf-8")
