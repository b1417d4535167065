"""No folder of a product holds more than 15 modules: past that, a folder's jobs split
into subpackages (issue 41; ``core/modes/``, ``core/admission/`` are the model)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOST = 15


def module_counts() -> dict[str, int]:
    """How many ``.py`` modules (``__init__.py`` included) each source folder holds."""
    return {
        str(folder.relative_to(ROOT)): len(list(folder.glob("*.py")))
        for folder in sorted(ROOT.glob("packages/*/src/**/"))
        if folder.name != "__pycache__"
    }


def test_no_folder_holds_more_than_15_modules() -> None:
    crowded = {folder: count for folder, count in module_counts().items() if count > MOST}
    assert crowded == {}
