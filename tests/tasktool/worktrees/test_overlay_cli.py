"""The worktree overlay through the CLI, in real linked git worktrees."""

from __future__ import annotations

from pathlib import Path

from .conftest import Repo, Run, as_json


def _ids(result_json: object) -> list[str]:
    assert isinstance(result_json, list)
    return [task["id"] for task in result_json]


def _next(run: Run, cwd: Path, *extra: str, env: dict[str, str] | None = None) -> list[str]:
    return _ids(as_json(run(cwd, *extra, "next", "--limit", "0", "--format", "json", env=env)))


def _by_id(run: Run, cwd: Path, *extra: str) -> dict[str, dict[str, object]]:
    listed = as_json(run(cwd, *extra, "list", "--format", "json"))
    return {task["id"]: task for task in listed}


def test_a_claim_in_one_worktree_hides_the_task_from_next_in_another(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a", branch="feature-a")
    b = repo.worktree("wt-b", branch="feature-b")
    assert "001" in _next(run, b)
    run(a, "set", "001", "--status", "in-progress")

    assert "001" not in _next(run, b)
    assert "001" not in _next(run, repo.main)
    assert "001" in _next(run, a)  # the claimer still sees its own in-progress task
    shown = _by_id(run, b)["001"]
    assert shown["status"] == "in-progress"
    assert shown["worktree"] == str(a)
    assert shown["branch"] == "feature-a"
    assert shown["sibling_only"] is False
    # B's own file is untouched: the overlay is a view.
    assert "status: in-progress" not in (b / "tasks" / "001-task.md").read_text()
    # isolated: B sees only its own files, by flag, variable or config.
    assert "001" in _next(run, b, "--worktree-scope", "isolated")
    assert "001" in _next(run, b, env={"TASKTOOL_WORKTREE_SCOPE": "isolated"})
    (b / ".tasktool.yaml").write_text("dir: tasks\nworktree_scope: isolated\n")
    assert _by_id(run, b)["001"]["status"] == "pending"
    # The flag beats the file.
    assert _by_id(run, b, "--worktree-scope", "unified")["001"]["status"] == "in-progress"


def test_a_sibling_completing_a_dependency_unblocks_the_dependent(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a")
    b = repo.worktree("wt-b")
    assert "002" not in _next(run, a)
    run(b, "set", "001", "--done")

    assert "002" in _next(run, a)
    assert "001" not in _next(run, a)  # completed in B: nothing left to do here either
    board = as_json(run(a, "board", "--format", "json"))
    completed = next(col for col in board["columns"] if col["value"] == "completed")
    assert [task["id"] for task in completed["tasks"]] == ["001"]
    stats = as_json(run(a, "stats", "--format", "json"))
    assert stats["by_status"]["completed"] == 1
    got = as_json(run(a, "get", "001", "--format", "json"))
    assert (got["status"], got["branch"]) == ("completed", "wt-b")
    assert "002" not in _next(run, a, "--worktree-scope", "isolated")


def test_set_on_a_task_only_a_sibling_has_is_refused(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a")
    b = repo.worktree("wt-b", branch="feature-b")
    run(b, "add", "Only on B", "--priority", "critical")
    listed = _by_id(run, a)
    assert listed["004"]["sibling_only"] is True
    assert listed["004"]["worktree"] == str(b)
    assert "004" not in _next(run, a)  # cannot be worked on here

    refused = run(a, "set", "004", "--status", "in-progress", code=1)
    assert "[worktree.sibling_only]" in refused.stderr
    assert str(b) in refused.stderr
    assert "feature-b" in refused.stderr
    for command in (("rm", "004"), ("archive", "004")):
        assert "[worktree.sibling_only]" in run(a, *command, code=1).stderr
    assert not (a / "tasks" / "004-only-on-b.md").exists()
    assert "status: pending" in (b / "tasks" / "004-only-on-b.md").read_text()
    # Isolated, the task is simply not there.
    assert "[task.not_found]" in run(a, "--worktree-scope", "isolated", "get", "004", code=1).stderr


def test_mutations_write_only_the_current_worktree(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a")
    run(repo.main, "set", "003", "--status", "in-review")
    run(a, "set", "003", "--priority", "critical")
    mine = (a / "tasks" / "003-task.md").read_text()
    assert "priority: critical" in mine
    assert "in-review" not in mine
    assert "priority: medium" in (repo.main / "tasks" / "003-task.md").read_text()
    assert _by_id(run, a)["003"]["status"] == "in-review"


def test_divergent_terminal_states_are_a_validate_warning(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a")
    run(a, "set", "003", "--status", "cancelled")
    run(repo.main, "set", "003", "--status", "completed")
    report = as_json(run(a, "validate", "--format", "json"))
    codes = [item["code"] for item in report["warnings"]]
    assert codes == ["worktree.divergent"]
    assert report["valid"] is True
    run(a, "validate", "--strict", code=2)
    assert _by_id(run, a)["003"]["status"] == "completed"  # the most advanced wins
    clean = as_json(run(a, "--worktree-scope", "isolated", "validate", "--format", "json"))
    assert clean["warnings"] == []


def test_each_sibling_task_dir_comes_from_its_own_config(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a")
    (a / "tasks").rename(a / "work")
    (a / ".tasktool.yaml").write_text("dir: work\n")
    run(a, "set", "001", "--status", "in-progress")
    assert (a / "work" / "001-task.md").read_text().count("in-progress") == 1
    assert _by_id(run, repo.main)["001"]["status"] == "in-progress"
    # From a subdirectory of the main worktree too.
    sub = repo.main / "tasks"
    assert _by_id(run, sub)["001"]["status"] == "in-progress"
    # --task-dir is mirrored instead: A has no tasks/ folder, so nothing is merged from it.
    assert _by_id(run, repo.main, "--task-dir", "tasks")["001"]["status"] == "pending"


def test_a_single_worktree_and_a_plain_directory_are_unchanged(
    repo: Repo, run: Run, tmp_path: Path
) -> None:
    shown = _by_id(run, repo.main)["001"]
    assert (shown["worktree"], shown["branch"], shown["sibling_only"]) == (None, None, False)
    plain = tmp_path / "plain"
    Repo.write(plain, "001", "Alone")
    (plain / ".tasktool.yaml").write_text("dir: tasks\n")
    assert list(_by_id(run, plain)) == ["001"]


def test_a_sibling_whose_config_is_broken_is_left_out_with_a_warning(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a")
    run(a, "set", "001", "--status", "in-progress")
    (a / ".tasktool.yaml").write_text("dir: [unclosed\n")
    assert _by_id(run, repo.main)["001"]["status"] == "pending"
    report = as_json(run(repo.main, "validate", "--format", "json"))
    (warning,) = report["warnings"]
    assert warning["code"] == "worktree.sibling_unreadable"
    assert str(a) in warning["message"]
    assert "[config.syntax]" in warning["message"]


def test_a_new_id_never_takes_one_only_a_sibling_holds(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a", branch="feature-a")
    b = repo.worktree("wt-b", branch="feature-b")
    run(a, "add", "Only on A")  # 004, in A's files only
    (b / "tasks" / "archive").mkdir()
    Repo.write(b, "005", "Archived on B").rename(b / "tasks" / "archive" / "005-task.md")
    # Each worktree alone has the ids free (isolated sees no sibling).
    isolated = run(repo.main, "--worktree-scope", "isolated", "next-id", "--format", "json")
    assert as_json(isolated)["id"] == "004"

    assert as_json(run(repo.main, "next-id", "--format", "json"))["id"] == "006"
    added = as_json(run(repo.main, "add", "Made here", "--format", "json"))
    assert added["id"] == "006"
    assert (repo.main / "tasks" / "006-made-here.md").is_file()
    clash = run(repo.main, "add", "Clash", "--id", "004", code=1)
    assert "[task.exists]" in clash.stderr
    assert not list((repo.main / "tasks").glob("004-*"))


def test_a_task_in_conflict_here_is_reported_not_shown_from_a_sibling(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a")
    run(a, "set", "003", "--status", "in-progress")
    path = repo.main / "tasks" / "003-task.md"
    text = path.read_text()
    conflicted = text.replace("priority: medium\n", "<<<<<<< HEAD\npriority: medium\n=======\n")
    path.write_text(conflicted.replace("---\n\n", ">>>>>>> other\n---\n\n", 1))
    assert "<<<<<<< HEAD" in path.read_text()

    for scope in ((), ("--worktree-scope", "isolated")):
        got = run(repo.main, *scope, "get", "003", code=1)
        assert "[task.merge_conflict]" in got.stderr, (scope, got.stderr)
        assert "sibling_only" not in got.stdout
        refused = run(repo.main, *scope, "set", "003", "--priority", "low", code=1)
        assert "[task.merge_conflict]" in refused.stderr, (scope, refused.stderr)
        assert "cannot be read" in refused.stderr
        assert "[task.broken]" in refused.stderr
        assert "worktree.sibling_only" not in refused.stderr
        assert "003" not in _by_id(run, repo.main, *scope)
    assert path.read_text().startswith(text.split("priority")[0])
    assert "<<<<<<< HEAD" in path.read_text()  # never rewritten
