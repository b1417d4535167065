"""The files layer: scanning the task directory, parsing task files, the parse cache,
round-trip rewriting, atomic writes and lock files.

Imports only :mod:`tasktool.model`.
"""

__all__ = []
