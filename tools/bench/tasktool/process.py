"""What every tasktool benchmark shares: how the CLI is started and the files it reads."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

# Installed CLIs run from cached bytecode; an inherited PYTHONDONTWRITEBYTECODE would make
# every run recompile every module and measure the compiler instead of the command.
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def tasktool_argv() -> list[str]:
    """The ``tasktool`` script next to this interpreter, else ``python -m tasktool``."""
    script = shutil.which("tasktool", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "tasktool"]


def age_files(task_dir: Path, seconds: int = 3600) -> None:
    """Date the task files ``seconds`` back: files written a moment ago are deliberately not
    cached (racy timestamps), and a real repository's files are older than that."""
    past = time.time() - seconds
    for path in task_dir.rglob("*.md"):
        os.utime(path, (past, past))
