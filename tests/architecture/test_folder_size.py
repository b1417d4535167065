"""No folder of a product holds more than 15 modules: past that, a folder's jobs split
into subpackages (issue 41; ``core/modes/``, ``core/admission/`` are the model)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOST = 15

# Known, named exceptions (issue 41, item 4): tasktool's folders still to be split by
# job. Remove a line when its folder is split; the test then guards it too.
NOT_YET_SPLIT = {
    "packages/tasktool/src/tasktool/files",
    "packages/tasktool/src/tasktool/planning",
    "packages/tasktool/src/tasktool/web",
}


def module_counts() -> dict[str, int]:
    """How many ``.py`` modules (``__init__.py`` included) each source folder holds."""
    return {
        str(folder.relative_to(ROOT)): len(list(folder.glob("*.py")))
        for folder in sorted(ROOT.glob("packages/*/src/**/"))
        if folder.name != "__pycache__"
    }


def test_no_folder_holds_more_than_15_modules() -> None:
    crowded = {
        folder: count
        for folder, count in module_counts().items()
        if count > MOST and folder not in NOT_YET_SPLIT
    }
    assert crowded == {}


def test_the_exceptions_are_still_needed() -> None:
    counts = module_counts()
    assert {folder for folder in NOT_YET_SPLIT if counts.get(folder, 0) > MOST} == NOT_YET_SPLIT
