"""Which files ``todos`` reads: git-ignored, skip list, ignore, excludes, binary."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tasktool.files.source_files import discover_files, read_source

FILES = [
    "src/app.py",
    "src/gen/out.py",
    "node_modules/x/index.js",
    ".hidden/a.py",
    "docs/old/a.md",
    "docs/new/b.md",
    "app.min.js",
    "local/secret.py",
    "third/lib.py",
]


def _populate(root: Path) -> None:
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("# TODO\n")


@pytest.mark.parametrize("git", [True, False])
def test_discovery(tmp_path: Path, git: bool) -> None:
    _populate(tmp_path)
    expected = ["app.min.js", "docs/new/b.md", "docs/old/a.md", "local/secret.py", "src/app.py"]
    expected += ["src/gen/out.py", "third/lib.py"]
    if git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        (tmp_path / ".gitignore").write_text("local/\n")
        expected.remove("local/secret.py")
        expected.insert(0, ".gitignore")
    assert discover_files(tmp_path) == expected
    narrowed = discover_files(
        tmp_path, ignore=["third"], excludes=["*.min.js", "docs/old/**", "gen"]
    )
    assert narrowed == [
        name
        for name in expected
        if name not in {"app.min.js", "docs/old/a.md", "src/gen/out.py", "third/lib.py"}
    ]


@pytest.mark.parametrize("git", [True, False])
def test_skipped_folders_are_neither_listed_nor_walked(tmp_path: Path, git: bool) -> None:
    """The task directory (``skip_dirs``) is left out whole, in git and out of it; a
    folder that only starts with its name is not."""
    _populate(tmp_path)
    (tmp_path / "docs" / "older").mkdir()
    (tmp_path / "docs" / "older" / "c.md").write_text("<!-- TODO -->\n")
    if git:
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    found = discover_files(tmp_path, skip_dirs=["docs/old", "third/"])
    assert "docs/old/a.md" not in found
    assert "third/lib.py" not in found
    assert {"docs/new/b.md", "docs/older/c.md", "src/app.py"} <= set(found)
    assert discover_files(tmp_path, skip_dirs=["."]) == discover_files(tmp_path)


def test_read_source_skips_binary(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"# TODO \xff\n")
    (tmp_path / "b.py").write_bytes(b"\x00\x01# TODO\n")
    assert read_source(tmp_path, "a.py") == "# TODO \ufffd\n"
    assert read_source(tmp_path, "b.py") is None
    assert read_source(tmp_path, "missing.py") is None
