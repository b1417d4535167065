"""Long answers a page at a time: paging in the API, the table's pages and links,
``list``/``search`` pages, and the board's columns shown in part.
"""

__all__ = []
