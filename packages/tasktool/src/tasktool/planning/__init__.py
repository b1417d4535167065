"""The planning layer: the loaded repository, ranking, tracks, the dependency graph,
validation, board, stats, filters, todos, and the checked mutations (changes, writes,
worklogs) every front end calls.

Never imports click, rich or a server library; front ends sit on top of it.
"""

__all__ = []
