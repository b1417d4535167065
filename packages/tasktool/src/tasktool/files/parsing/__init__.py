"""Task files as text: the frontmatter reader, the fast parse into a task, reading
and parsing files, round-trip edits of frontmatter, YAML scalars as text, the house style
of a repository's files, and Backlog.md's files.
"""

__all__ = []
