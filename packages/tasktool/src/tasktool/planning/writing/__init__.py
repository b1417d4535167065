"""The checked mutations every front end calls: changes as values, writes (update,
create, remove, archive, renumber), new tasks from JSON, archiving, deduplication,
writes in another tool's layout, and worklogs.
"""

__all__ = []
