"""``tasktool sync``: GitHub issues and Jira tickets into task files.

A front end over the core write path (:mod:`tasktool.writes`: locks, atomic
replace, the configured id strategy); it never imports the CLI, nor the CLI it. Modules:
``sources`` (the config entries), ``transport`` (httpx, retries, rate limits),
``github`` and ``jira`` (the trackers), ``adf`` (Jira rich text to Markdown),
``mapping`` (``field_map``), ``state`` (the state file), ``engine`` (the
reconciliation), ``report`` (results), ``run`` (a whole run) and ``command``
(the Click command, which the CLI loads by name; importing this package does
not load click).
"""

from __future__ import annotations

from tasktool.config.sync import SourceConfig, parse_sources
from tasktool.sync.adf import adf_to_markdown
from tasktool.sync.report import CONFLICT_MODES, ConflictMode, Outcome, SourceReport, SyncReport
from tasktool.sync.run import configured_sources, run_sync
from tasktool.sync.transport import Clock, RetryPolicy

__all__ = [
    "CONFLICT_MODES",
    "Clock",
    "ConflictMode",
    "Outcome",
    "RetryPolicy",
    "SourceConfig",
    "SourceReport",
    "SyncReport",
    "adf_to_markdown",
    "configured_sources",
    "parse_sources",
    "run_sync",
]
