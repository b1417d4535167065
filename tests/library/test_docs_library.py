"""Every Python example in ``docs/library.md`` runs and its assertions hold.

Each runs in a fresh interpreter in an empty directory; an example that defines
``test_`` functions is run by pytest there instead, with only the installed plugins.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).parents[2] / "docs" / "library.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), flags=re.MULTILINE | re.DOTALL)


def environment(home: Path) -> dict[str, str]:
    """No ``TASKTOOL_*``/``MATCHMAKER_*`` of the developer's, and a home of its own."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("TASKTOOL_", "MATCHMAKER_"))}
    return {**kept, "HOME": str(home)}


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example-{n}" for n in range(len(BLOCKS))])
def test_example_runs(block: str, tmp_path: Path) -> None:
    if "def test_" in block:
        (tmp_path / "test_example.py").write_text(block)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    else:
        command = [sys.executable, "-c", block]
    result = subprocess.run(
        command,
        cwd=tmp_path,
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    if "def test_" in block:
        assert f"{block.count('def test_')} passed" in result.stdout
