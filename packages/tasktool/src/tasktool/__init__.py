"""Tasks kept as Markdown files with YAML frontmatter: a layered core and its command line."""

from __future__ import annotations

from tasktool.model.errors import TaskToolError
from tasktool.model.task import Priority, Status, Task

__all__ = ["Priority", "Status", "Task", "TaskToolError", "__version__"]
__version__ = "0.1.0"
