"""Finding a git repository's worktrees by reading its administrative files.

No ``git`` process and no gitpython: ``git worktree list`` costs a process start and
gitpython far more, while the answer is a handful of small files. For a directory inside a worktree:

- walk up to the first ``.git``; none: not a repository (one ``stat`` per parent);
- ``.git`` is a directory: this is the main worktree and ``.git`` the common dir;
  ``.git`` is a file (``gitdir: <common>/worktrees/<name>``): a linked worktree,
  whose ``commondir`` file names the common dir;
- linked worktrees are the entries of ``<common>/worktrees/``, each with a
  ``gitdir`` file naming ``<worktree>/.git``; a single-worktree repository has no
  such folder, so it pays one ``stat`` beyond finding ``.git``;
- each worktree's branch is read from its ``HEAD`` (``ref: refs/heads/<branch>``;
  a detached HEAD has no branch).

Entries whose worktree folder is gone (``git worktree prune`` material) are skipped.
A bare main repository has no main worktree.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

__all__ = ["Worktree", "WorktreeSet", "discover_worktrees"]

_REF_PREFIX = "ref: refs/heads/"


class Worktree(msgspec.Struct, frozen=True, kw_only=True):
    """One checked-out worktree of a repository."""

    #: The worktree's top folder (absolute).
    path: str
    #: The checked-out branch; ``None`` for a detached HEAD.
    branch: str | None = None
    #: The main worktree (the one holding ``.git/``) rather than a linked one.
    main: bool = False


class WorktreeSet(msgspec.Struct, frozen=True, kw_only=True):
    """The worktree a directory is in and its siblings (the repository's other worktrees)."""

    current: Worktree
    siblings: tuple[Worktree, ...] = ()

    @property
    def root(self) -> str:
        """The repository's identity across worktrees: the main worktree's path, else the
        current one's (a bare repository's linked worktrees share no main)."""
        for worktree in (self.current, *self.siblings):
            if worktree.main:
                return worktree.path
        return min(worktree.path for worktree in (self.current, *self.siblings))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _branch(admin: Path) -> str | None:
    head = _read(admin / "HEAD")
    if head is None or not head.startswith(_REF_PREFIX):
        return None
    return head.removeprefix(_REF_PREFIX)


def _top(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return None


def _admin_dirs(top: Path) -> tuple[Path, Path] | None:
    """``(this worktree's admin dir, the common dir)``; ``None`` when ``.git`` is unusable."""
    dot_git = top / ".git"
    if dot_git.is_dir():
        return dot_git, dot_git
    text = _read(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    admin = Path(text.removeprefix("gitdir:").strip())
    if not admin.is_absolute():
        admin = (top / admin).resolve()
    common_text = _read(admin / "commondir")
    if common_text is None:
        return None
    common = Path(common_text)
    return admin, common if common.is_absolute() else (admin / common).resolve()


def _linked(common: Path) -> list[tuple[Path, Path]]:
    """``(worktree folder, its admin dir)`` of every linked worktree whose folder exists."""
    try:
        entries = sorted(os.scandir(common / "worktrees"), key=lambda entry: entry.name)
    except OSError:
        return []
    found: list[tuple[Path, Path]] = []
    for entry in entries:
        admin = Path(entry.path)
        gitdir = _read(admin / "gitdir")
        if gitdir is None:
            continue
        folder = Path(gitdir).parent
        if (folder / ".git").is_file():
            found.append((folder, admin))
    return found


def discover_worktrees(start: Path) -> WorktreeSet | None:
    """The worktrees of the repository ``start`` is in; ``None`` outside a repository."""
    start = start.absolute()
    top = _top(start)
    if top is None:
        return None
    dirs = _admin_dirs(top)
    if dirs is None:
        return None
    admin, common = dirs
    if not (common / "worktrees").is_dir():
        # The single-worktree case stops here (the branch is only read for provenance).
        return WorktreeSet(current=Worktree(path=str(top), main=admin == common))
    here = Worktree(path=str(top), branch=_branch(admin), main=admin == common)
    everyone: list[Worktree] = []
    main_folder = common.parent
    if common.name == ".git" and (main_folder / ".git").is_dir():
        everyone.append(Worktree(path=str(main_folder), branch=_branch(common), main=True))
    everyone.extend(
        Worktree(path=str(folder), branch=_branch(linked_admin))
        for folder, linked_admin in _linked(common)
    )
    real_here = os.path.realpath(top)
    siblings = tuple(w for w in everyone if os.path.realpath(w.path) != real_here)
    return WorktreeSet(current=here, siblings=siblings)
