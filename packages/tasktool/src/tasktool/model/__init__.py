"""The model layer: the ``Task`` record, field vocabularies, ids, config, diagnostics, errors.

Imports nothing else of tasktool; every layer above builds on it.
"""

__all__ = []
