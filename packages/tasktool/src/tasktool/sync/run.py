"""A whole ``sync`` run: read the sources from the config, check credentials, reconcile.

Every problem that needs no request (the config, a missing credential
variable, an ``output_dir`` outside the task directory) is raised before the
first request. Runs are serialized by the ``sync`` lock of the task
directory, so two runs cannot import the same item twice; a dry run takes no
lock and writes nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasktool.config.document import read_config
from tasktool.config.sync import SourceConfig, parse_sources, read_credentials
from tasktool.files.scanning.scan import scan_tasks
from tasktool.files.storage import locked
from tasktool.model.errors import TaskToolError
from tasktool.planning.repository import Repository
from tasktool.sync.engine import Progress, Reconciler, output_group
from tasktool.sync.github import GitHubSource
from tasktool.sync.jira import JiraSource
from tasktool.sync.remote import Source
from tasktool.sync.report import ConflictMode, SyncReport
from tasktool.sync.state import load_state, save_state
from tasktool.sync.transport import Clock, RetryPolicy


def configured_sources(repo: Repository, only: str | None = None) -> tuple[SourceConfig, ...]:
    """The checked ``sync.sources`` of the config file (just ``only`` when given)."""
    file = repo.loaded.file
    section = read_config(Path(file)).data.get("sync") if file is not None else None
    sources = parse_sources(section, str(Path(file).parent) if file else str(Path.cwd()))
    if not sources:
        raise TaskToolError(
            "no sync sources are configured (add sync.sources to the config file)",
            code="sync.no_sources",
        )
    if only is None:
        return sources
    chosen = tuple(source for source in sources if source.name == only)
    if not chosen:
        names = ", ".join(source.name for source in sources)
        raise TaskToolError(
            f"no sync source named {only!r} (configured: {names})", code="sync.unknown_source"
        )
    return chosen


def open_source(
    config: SourceConfig,
    credentials: tuple[str | None, str | None],
    *,
    policy: RetryPolicy | None = None,
    clock: Clock | None = None,
) -> Source:
    """The client for one source (no request is made yet)."""
    user, token = credentials
    if config.kind == "github":
        return GitHubSource(config, token, policy=policy, clock=clock)
    assert user is not None  # the config requires both for jira
    assert token is not None
    return JiraSource(config, user, token, policy=policy, clock=clock)


def run_sync(
    repo: Repository,
    sources: Sequence[SourceConfig],
    *,
    env: Mapping[str, str],
    mode: ConflictMode = "skip",
    dry_run: bool = False,
    policy: RetryPolicy | None = None,
    clock: Clock | None = None,
    progress: Progress | None = None,
) -> SyncReport:
    """Sync ``sources`` into the repository and report what happened."""
    credentials = [read_credentials(source, env) for source in sources]
    for config in sources:
        output_group(repo, config)
    report = SyncReport(dry_run=dry_run, conflict_mode=mode)
    lock = contextlib.nullcontext() if dry_run else locked(repo.task_dir, "sync")
    with lock:
        # Read inside the lock: another run may have written tasks and state meanwhile.
        repo = Repository(repo.loaded, scan_tasks(repo.task_dir, repo.config.ignore))
        state = load_state(repo.task_dir)
        for config, found in zip(sources, credentials, strict=True):
            source = open_source(config, found, policy=policy, clock=clock)
            reconciler = Reconciler(
                repo, config, state.records(config.name), mode=mode, dry_run=dry_run
            )
            try:
                outcome = reconciler.run(source.items(), progress)
            finally:
                source.close()
            outcome.retries = source.transport.retries
            report.sources.append(outcome)
            if not dry_run:
                save_state(repo.task_dir, state)
    return report


__all__ = ["configured_sources", "open_source", "run_sync"]
