"""Scanning the task directory: the walk, the scan against the parse cache, the rescan
that merges changed files in, parsing on every core, and finding git worktrees.
"""

__all__ = []
