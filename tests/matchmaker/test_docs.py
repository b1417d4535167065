"""Statements in the docs that go stale on their own: versions called "the newest"."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_granian_the_docs_describe_is_the_pinned_one_not_the_newest() -> None:
    pinned = re.search(r"^granian==(\S+)$", (ROOT / ".ci/constraints.txt").read_text(), re.M)
    assert pinned is not None
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for mention in re.finditer(r"granian (\d+\.\d+\.\d+)([^.\n]*)", text):
            assert mention.group(1) == pinned.group(1), (path, mention.group(0))
            assert "newest" not in mention.group(2), (path, mention.group(0))
