"""The dependency graph page: its paged API, the part drawn first, and the SVG."""

__all__ = []
