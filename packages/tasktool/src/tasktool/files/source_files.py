"""Which files of a project ``todos`` reads, and reading them as text (the I/O shell).

Inside a git work tree the candidates are git's own list (tracked files plus
untracked ones that are not ignored), so git-ignored files are skipped the way
git skips them; elsewhere the directory is walked. The task directory is
neither listed nor walked (``skip_dirs``): its files are tasks, not source, and
at 100,000 tasks reading them was nearly all of the command's time. Then the
built-in skip list, hidden directories, ``ignore``, and the exclude globs
(``todos.exclude`` plus ``--exclude``) remove what they name. Binary and very
large files read as ``None``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from pathlib import Path

from tasktool.files.scanning.scan import SKIPPED_DIRS

__all__ = ["MAX_SOURCE_BYTES", "discover_files", "read_source"]

MAX_SOURCE_BYTES = 2 * 1024 * 1024
_BINARY_PROBE = 8192


def _git_listing(root: Path, skip_dirs: Sequence[str]) -> list[str] | None:
    # Pathspecs leave those folders out inside git: their names are never listed.
    outside = ["--", ".", *(f":(exclude,literal){folder}" for folder in skip_dirs)]
    try:
        listed = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
                *(outside if skip_dirs else ()),
            ],
            capture_output=True,
            check=False,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if listed.returncode != 0:
        return None
    names = listed.stdout.decode("utf-8", "surrogateescape").split("\0")
    return list(dict.fromkeys(name for name in names if name))


def _walk(root: Path, skip: frozenset[str], skip_dirs: Sequence[str]) -> list[str]:
    found: list[str] = []
    for directory, subdirs, files in os.walk(root):
        relative = Path(directory).relative_to(root).as_posix()
        prefix = "" if relative == "." else relative + "/"
        subdirs[:] = [
            d
            for d in subdirs
            if d not in skip and not d.startswith(".") and prefix + d not in skip_dirs
        ]
        found.extend(prefix + name for name in files)
    return found


def _dir_skipped(parts: Sequence[str], skip: frozenset[str], ignore: Sequence[str]) -> bool:
    for depth, part in enumerate(parts[:-1], start=1):
        if part in skip or part.startswith("."):
            return True
        if "/".join(parts[:depth]) in ignore:
            return True
    return False


def _excluded(path: str, parts: Sequence[str], patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        if fnmatchcase(path, pattern):
            return True
        if "/" not in pattern.rstrip("/") and fnmatchcase(parts[-1], pattern):
            return True
        # A pattern naming a directory (``gen``, ``docs/old/``, ``docs/old/**``) covers it all.
        directory = pattern.removesuffix("/**").rstrip("/")
        by_name = "/" not in directory
        for depth in range(1, len(parts)):
            if fnmatchcase("/".join(parts[:depth]), directory):
                return True
            if by_name and fnmatchcase(parts[depth - 1], directory):
                return True
    return False


def discover_files(
    root: Path,
    *,
    ignore: Sequence[str] = (),
    excludes: Sequence[str] = (),
    skip_dirs: Sequence[str] = (),
) -> list[str]:
    """Relative POSIX paths of the files to scan under ``root``, sorted; nothing under the
    folders ``skip_dirs`` names (relative POSIX paths: the task directory)."""
    ignored = [entry.strip("/") for entry in ignore if entry.strip("/")]
    skip = SKIPPED_DIRS | {entry for entry in ignored if "/" not in entry}
    skipped = [folder.strip("/") for folder in skip_dirs if folder.strip("/") not in {"", "."}]
    listed = _git_listing(root, skipped)
    if listed is None:
        listed = _walk(root, skip, skipped)
    kept: list[str] = []
    for path in listed:
        parts = path.split("/")
        if _dir_skipped(parts, skip, [*ignored, *skipped]) or _excluded(path, parts, excludes):
            continue
        kept.append(path)
    return sorted(kept)


def read_source(root: Path, relative: str) -> str | None:
    """The file's text, or ``None`` when it is missing, binary or too large to be source."""
    path = root / relative
    try:
        if not path.is_file() or path.stat().st_size > MAX_SOURCE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:_BINARY_PROBE]:
        return None
    return data.decode("utf-8", "replace")
