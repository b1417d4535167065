"""What tasktool keeps between runs: the parse cache (its head, rows files, body stores
and columns of ids), memos, sibling worktrees' indexes, and the signatures and digests
that tell whether a file is as it was.
"""

__all__ = []
