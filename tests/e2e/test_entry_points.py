"""The installed console scripts and ``python -m`` entry points answer --version and --help."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import matchmaker
import tasktool


@pytest.mark.parametrize(
    ("name", "version"),
    [("matchmaker", matchmaker.__version__), ("tasktool", tasktool.__version__)],
)
@pytest.mark.parametrize("how", ["script", "module"])
def test_version_and_help(name: str, version: str, how: str) -> None:
    if how == "script":
        script = shutil.which(name, path=str(Path(sys.executable).parent))
        assert script is not None, f"console script {name} is not installed"
        argv = [script]
    else:
        argv = [sys.executable, "-m", name]
    out = subprocess.run([*argv, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"{name}, version {version}"
    helped = subprocess.run([*argv, "--help"], capture_output=True, text=True, check=True)
    assert "Usage:" in helped.stdout
