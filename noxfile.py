"""The one entry point for checks: ``nox`` runs lint, imports, typecheck and tests.

Each session builds its own environment (uv when available, else virtualenv)
and installs the three packages from ``packages/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
PACKAGES = ["./packages/common", "./packages/matchmaker[postgres]", "./packages/tasktool"]
SOURCES = ["packages/common/src", "packages/matchmaker/src", "packages/tasktool/src"]

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "imports", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = not os.environ.get("CI")


def _install_packages(session: nox.Session) -> None:
    session.install(*PACKAGES)


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the whole tree."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python="3.11")
def imports(session: nox.Session) -> None:
    """lint-imports: the layer and independence contracts of pyproject's [tool.importlinter]."""
    _install_packages(session)
    session.install(*nox.project.dependency_groups(PYPROJECT, "imports"))
    session.run("lint-imports")


@nox.session(python="3.11")
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the three src/ trees."""
    _install_packages(session)
    session.install(*nox.project.dependency_groups(PYPROJECT, "typecheck"))
    session.run("mypy", "--strict", *SOURCES)


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """The full test suite against the installed packages."""
    _install_packages(session)
    session.install(*nox.project.dependency_groups(PYPROJECT, "test"))
    session.run("pytest", *session.posargs)
