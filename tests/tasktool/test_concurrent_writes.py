"""Concurrent ``set`` calls on one task lose no update (threads, real files, real locks)."""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tasktool.config import Overrides
from tasktool.planning.repository import load_context
from tasktool.planning.writing.changes import TaskChange
from tasktool.planning.writing.writes import update_task
from tests.tasktool.conftest import task_text

# Edits that commute: each adds its own tag or sets its own field, so the final file must
# hold every one of them whatever order the locks hand them out in.
_EDITS = st.lists(
    st.one_of(
        st.builds(lambda n: ("tag", f"t{n}"), st.integers(0, 30)),
        st.sampled_from(
            [("owner", "ann"), ("priority", "high"), ("effort", "small"), ("phase", "p1")]
        ),
    ),
    min_size=2,
    max_size=8,
    unique=True,
)


@settings(deadline=None, max_examples=8)
@given(_EDITS)
def test_concurrent_edits_all_land(edits: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / ".git").mkdir()
        (root / "1-task.md").write_text(task_text("1", "T", tags=[], extra="keep"))
        env = {"HOME": str(root / "home")}

        def apply(edit: tuple[str, str]) -> None:
            field, value = edit
            change = (
                TaskChange(add={"tags": (value,)})
                if field == "tag"
                else TaskChange(set={field: value})
            )
            repo = load_context(Overrides(), cwd=root, env=env, use_cache=False)
            update_task(repo, "1", change)

        with ThreadPoolExecutor(max_workers=len(edits)) as pool:
            list(pool.map(apply, edits))
        final = load_context(Overrides(), cwd=root, env=env, use_cache=False).get("1")
        assert sorted(final.tags) == sorted(value for field, value in edits if field == "tag")
        for field, value in edits:
            if field != "tag":
                assert getattr(final, field) == value
        assert "extra: keep" in (root / "1-task.md").read_text()


_ADDER = """
import sys
from pathlib import Path

import tasktool.planning.writing.writes as writes
from tasktool.config import Overrides
from tasktool.planning.repository import load_context

root, log, name = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
write_new = writes._write_new


def logged(*args, **kwargs):  # runs inside the repository lock: the log is creation order
    task = write_new(*args, **kwargs)
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(task.id + "\\n")
    return task


writes._write_new = logged
for index in range(25):
    repo = load_context(Overrides(), cwd=root, env={"HOME": str(root)})
    writes.create_task(repo, {"title": f"{name} {index}", "status": "pending"})
"""


def test_ulids_from_two_processes_sort_in_creation_order(tmp_path: Path) -> None:
    """Two processes adding at once under the default ``id.length``: every id sorts after
    every id made before it (the lock's order), and none repeats."""
    import subprocess
    import sys

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "tasks").mkdir()
    (root / ".tasktool.yaml").write_text("dir: tasks\nid:\n  strategy: ulid\n")
    log = tmp_path / "order.log"
    children = [
        subprocess.Popen([sys.executable, "-c", _ADDER, str(root), str(log), name])
        for name in ("left", "right")
    ]
    assert [child.wait(timeout=120) for child in children] == [0, 0]
    made = log.read_text(encoding="utf-8").split()
    assert len(made) == 50
    assert len(set(made)) == 50
    assert sorted(made) == made
    assert all(len(value) == 6 for value in made)
