"""The import contracts of the root ``pyproject.toml`` (``[tool.importlinter]``) hold.

``nox -s imports`` runs the same check; this test makes a plain ``pytest`` run fail too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

cli = pytest.importorskip("importlinter.cli", reason="import-linter (dependency group 'imports')")


@pytest.fixture
def loggers_kept() -> Iterator[None]:
    """import-linter configures logging with ``dictConfig``, which disables every logger
    that exists by then: the later tests' ``caplog`` would see no line of them."""
    loggers = [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger) and not logger.disabled
    ]
    yield
    for logger in loggers:
        logger.disabled = False


@pytest.mark.usefixtures("loggers_kept")
def test_every_import_contract_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.lint_imports(
        config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True
    )
    report = capsys.readouterr().out
    assert code == 0, report
    assert "0 broken" in report
