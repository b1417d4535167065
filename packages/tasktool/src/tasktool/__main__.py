from __future__ import annotations

from tasktool.cli.main import run

__all__ = []

run()
