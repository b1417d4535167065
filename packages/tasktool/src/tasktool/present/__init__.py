"""The present layer: tables (fitted to a terminal), JSON/YAML output and graph rendering.

Never imports a front end or a server library.
"""

__all__ = []
