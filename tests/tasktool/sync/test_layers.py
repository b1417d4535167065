"""The sync front end stays a front end: it never loads the CLI, click or rich."""

from __future__ import annotations

import subprocess
import sys


def test_sync_imports_no_cli() -> None:
    code = (
        "import sys, tasktool.sync, tasktool.sync.run; "
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'click', 'rich', 'httpx'} or m.startswith('tasktool.cli'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert loaded == []  # httpx too: it is imported when a source first connects
