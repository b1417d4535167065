"""Importing the tasktool core loads no UI, server or git library (a fresh interpreter each).

The layers below the front ends (model, files, config, planning) are what the CLI, the web
dashboard and the MCP server share; a stray import of rich, starlette or mcp there would
slow every command and tie the core to one front end. The ``tasktool list --format json``
path is checked the same way (and, as a whole process, by ``test_list_read_path_stays_light``
in ``tests/e2e/test_tasktool_cli.py``), and so is each read command's: a module it does not
use must not be imported at its start (every import costs a warm run about 0.1 ms or more).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

CORE = ("tasktool.model", "tasktool.files", "tasktool.config", "tasktool.planning")
HEAVY = {"click", "rich", "starlette", "mcp", "git", "hypercorn", "picows", "httpx"}

PROBE = """
import importlib, json, pkgutil, sys
for package in {core!r}:
    module = importlib.import_module(package)
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""


def loaded_after_importing(packages: tuple[str, ...]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(core=packages)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(done.stdout))


@pytest.mark.parametrize("package", CORE)
def test_core_layer_loads_no_heavy_library(package: str) -> None:
    loaded = loaded_after_importing((package,))
    assert "tasktool.planning" not in loaded or package == "tasktool.planning"
    assert {name.partition(".")[0] for name in loaded} & HEAVY == set()


def test_the_probe_sees_a_heavy_import() -> None:
    """The probe itself works: the CLI front end does load click."""
    loaded = loaded_after_importing(("tasktool.cli",))
    assert {"click", "tasktool.cli.commands.listing"} <= loaded


#: Run through the entry point (``python -m tasktool``'s ``run``); the modules are printed at
#: exit. A registered ``atexit`` handler also keeps the one-shot process from ending with
#: ``os._exit`` (:mod:`tasktool.cli.oneshot`), so the handler runs after the command.
COMMAND_PROBE = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["tasktool", *json.loads(sys.argv[1])]
from tasktool.cli.main import run
run()
"""

#: Modules no read command loads: each was imported by every command's start and is now
#: imported where it is used.
NOT_READ = {
    "dataclasses",  # GlobalOptions is a msgspec.Struct
    "click.shell_completion",  # when completing (tasktool.cli.commands.shell)
    "shlex",  # the pager's command line, on a terminal
    "fcntl",  # the writers' locks
    "subprocess",  # the pager, todos' git ls-files (tasktool.files.source_files)
    "tasktool.config.sync",  # a config with a sync section
    "tasktool.config.registry",  # --project, --all-projects, no project config file
    "tasktool.files.scanning.fanout",  # a scan that parses files
    "tasktool.files.scanning.merge",  # a scan that parses files (merges them with the cached rows)
    "hashlib",  # OpenSSL: the memos' names are BLAKE2 digests (tasktool.files.caches.digest)
    "shutil",  # with zlib, bz2, lzma: list's replay copies by sendfile to a pipe or file
}
#: What each read command does not load beside :data:`NOT_READ`, and what it does (its own
#: command module at least, so a probe that sees nothing cannot pass).
READ_PATHS: dict[tuple[str, ...], tuple[set[str], set[str]]] = {
    ("list", "--format", "json"): (
        {"bisect", "tasktool.planning.writing.worklog", "tasktool.planning.graph"},
        {"tasktool.cli.commands.listing"},
    ),
    ("list",): ({"bisect", "tasktool.planning.writing.worklog"}, {"tasktool.cli.commands.listing"}),
    ("get", "1"): (
        {"tasktool.planning.graph", "tasktool.planning.writing.worklog"},  # 1 has no worklog
        {"tasktool.planning.get_index", "bisect"},  # the folder of a row of the index
    ),
    ("next",): (
        {"tasktool.planning.board", "tasktool.planning.tracks", "tasktool.present.graph_render"},
        {"tasktool.cli.commands.planning", "tasktool.planning.ranking", "bisect"},  # overlay's
    ),
    ("stats",): (
        {
            "bisect",
            "tasktool.planning.ranking",
            "tasktool.planning.tracks",
            "tasktool.present.graph_render",
        },
        # A warm stats to a pipe replays its kept output: tasktool.planning.stats is not
        # loaded then (tests/tasktool/test_piped_outputs.py).
        {"tasktool.cli.commands.overview"},
    ),
    ("board",): (
        {
            "bisect",
            "tasktool.planning.ranking",
            "tasktool.planning.graph",
            "tasktool.present.graph_render",
        },
        {"tasktool.cli.commands.overview", "tasktool.planning.board"},
    ),
    ("validate",): (
        {"bisect", "tasktool.files.source_files", "tasktool.planning.writing.worklog"},
        {"tasktool.cli.commands.upkeep", "tasktool.planning.checks"},
    ),
}


def warm_run(repo: Path, args: tuple[str, ...]) -> tuple[str, set[str]]:
    """The output and the modules of a warm run: the first run fills the parse cache, the
    second the command's memo (next, stats, validate: :mod:`tasktool.planning.memos.derived_memo`),
    each writing files with modules a warm run does not load."""
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", COMMAND_PROBE, json.dumps(args)],
            cwd=repo,
            env={"HOME": str(repo), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    return done.stdout, set(json.loads(done.stderr.splitlines()[-1]))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "tasks").mkdir()
    (tmp_path / ".tasktool.yaml").write_text("dir: tasks\n", encoding="utf-8")
    (tmp_path / "tasks" / "1-one.md").write_text(
        "---\nid: '1'\ntitle: One\nstatus: pending\n---\n", encoding="utf-8"
    )
    (tmp_path / "tasks" / "2-two.md").write_text(
        "---\nid: '2'\ntitle: Two\nstatus: pending\ndependencies: ['1']\n---\n",
        encoding="utf-8",
    )
    for path in (tmp_path / ".tasktool.yaml", *(tmp_path / "tasks").iterdir()):
        os.utime(path, (time.time() - 60, time.time() - 60))  # old enough to be cached
    return tmp_path


def test_list_json_loads_no_heavy_library(repo: Path) -> None:
    output, loaded = warm_run(repo, ("list", "--format", "json"))
    assert [task["id"] for task in json.loads(output)] == ["1", "2"]
    top = {name.partition(".")[0] for name in loaded}
    assert "click" in top  # the CLI itself, so the probe does see imports
    assert top & (HEAVY - {"click"}) == set()
    assert top & {"ruamel", "yaml"} == set()  # a warm run parses no YAML at all


@pytest.mark.parametrize("args", list(READ_PATHS), ids=" ".join)
def test_read_command_imports_only_what_it_uses(repo: Path, args: tuple[str, ...]) -> None:
    """Each module here was once loaded by the command's start (``tasktool.cli.main`` and
    the command modules) without being used: it fails when an eager import comes back."""
    output, loaded = warm_run(repo, args)
    assert output
    absent, present = READ_PATHS[args]
    assert present <= loaded
    assert loaded & (NOT_READ | absent) == set()
