"""The model layer: the ``Task`` record, field vocabularies, ids, settings, diagnostics, errors.

Imports nothing else of tasktool; every layer above builds on it.
"""

__all__ = []
