"""The worktree overlay: reading sibling git worktrees and each task's effective status
across them.
"""

__all__ = []
