"""The one entry point for checks: ``nox`` runs lint, imports, typecheck, tests, js and
unprivileged.

Each session builds its own environment (uv when available, else virtualenv),
installs the three packages from ``packages/`` and every tool at the version
pinned in ``.ci/constraints.txt``. Tests run on every interpreter found among
3.11 (the oldest supported) and the newest installed; none found is an error.
When ``CI_REPORTS`` names a directory, each pytest run (and ``js``) writes its
JUnit XML there, for ``.ci/skips.py`` to count the skips. matchmaker comes with its ``fast`` extra
(picows, uvloop), so the tests run the data plane on both servers (hypercorn is always
installed); tasktool with its ``web`` and ``mcp`` extras. ``js`` runs the JavaScript
client's tests (clients/js: ``npm ci`` from its lock file, tsc, ``node --test``)
against that session's ``matchmaker``; it needs Node 20 or later and npm on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
CONSTRAINTS = ROOT / ".ci" / "constraints.txt"
PACKAGES = [
    "./packages/common",
    "./packages/matchmaker[postgres,fast,webrtc,cluster]",
    "./packages/tasktool[web,mcp]",
]
SOURCES = ["packages/common/src", "packages/matchmaker/src", "packages/tasktool/src"]
SUPPORTED = [f"3.{minor}" for minor in range(11, 20)]
#: The throwaway identity the ``unprivileged`` session runs as (no passwd entry needed).
UNPRIVILEGED_UID = 64_999


def _runnable(version: str) -> list[Path]:
    """The ``python<version>`` executables on PATH that really run (pyenv shims may not)."""
    found = []
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(directory, f"python{version}")
        if not candidate.is_file():
            continue
        probe = [str(candidate), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]
        done = subprocess.run(probe, capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip() == version:
            found.append(candidate)
    return found


def _interpreters() -> list[str]:
    """3.11 and the newest supported minor version that runs here (3.11 alone if it is all)."""
    found = [version for version in SUPPORTED if _runnable(version)]
    if not found:
        return ["3.11"]  # absent: nox reports it missing, and that is an error
    return sorted({found[0], found[-1]}, key=SUPPORTED.index)


def _world_executable(version: str) -> str:
    """An interpreter of ``version`` that another uid may run (pyenv's live under /root)."""
    for candidate in _runnable(version):
        real = candidate.resolve()
        if all(part.stat().st_mode & 0o001 for part in [real, *real.parents]):
            return str(real)
    return version


PYTHONS = _interpreters()

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "imports", "typecheck", "tests", "js", "unprivileged"]
nox.options.reuse_existing_virtualenvs = not os.environ.get("CI")
nox.options.error_on_missing_interpreters = True
nox.options.download_python = "never"  # test what is installed, never a fetched stand-in


def _install(session: nox.Session, *requirements: str) -> None:
    session.install("-c", str(CONSTRAINTS), *requirements)


def _group(name: str) -> list[str]:
    return list(nox.project.dependency_groups(PYPROJECT, name))


def _junit(session: nox.Session) -> list[str]:
    reports = os.environ.get("CI_REPORTS")
    if not reports:
        return []
    return [f"--junitxml={Path(reports) / session.name.replace('/', '_')}.xml"]


@nox.session(python=PYTHONS[0])
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the whole tree."""
    _install(session, *_group("lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHONS[0])
def imports(session: nox.Session) -> None:
    """lint-imports: the layer and independence contracts of pyproject's [tool.importlinter]."""
    _install(session, *PACKAGES, *_group("imports"))
    session.run("lint-imports")


@nox.session(python=PYTHONS[0])
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the three src/ trees, then over tests/ (strict too)."""
    _install(session, *PACKAGES, *_group("typecheck"))
    session.run("mypy", "--strict", *SOURCES)
    session.run("mypy", "--explicit-package-bases", "tests")


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The full test suite against the installed packages."""
    _install(session, *PACKAGES, *_group("test"))
    session.run("pytest", *_junit(session), *session.posargs)


@nox.session(python=PYTHONS[0])
def js(session: nox.Session) -> None:
    """The JavaScript client (clients/js): npm ci, tsc, then node's test runner against the
    ``matchmaker`` installed here (every mode, resume, the playground in Chromium, the
    README's JS example). The summary is node's; a failure fails the session."""
    _install(session, *PACKAGES)
    client = ROOT / "clients" / "js"
    tests = sorted(str(path.relative_to(client)) for path in client.glob("test/*.test.mjs"))
    reporters = ["--test-reporter=spec", "--test-reporter-destination=stdout"]
    reports = os.environ.get("CI_REPORTS")
    if reports:  # for .ci/skips.py, as pytest's JUnit files
        reporters += ["--test-reporter=junit", f"--test-reporter-destination={reports}/js.xml"]
    with session.chdir(client):
        session.run("npm", "ci", "--no-audit", "--no-fund", external=True)
        session.run("npx", "--no-install", "tsc", "-p", "tsconfig.json", external=True)
        session.run("npx", "--no-install", "tsc", "-p", "tsconfig.types.json", external=True)
        session.run(
            *("node", "--test", "--test-concurrency=1", *reporters, *tests),
            env={"MATCHMAKER_BIN": str(Path(session.bin) / "matchmaker")},
            external=True,
        )


@nox.session(python=_world_executable(PYTHONS[0]))
def unprivileged(session: nox.Session) -> None:
    """As root, the tests marked ``unprivileged`` again, as a throwaway uid (setpriv)."""
    if os.geteuid() != 0:
        session.skip("not root: the tests session ran the unprivileged tests")
    _install(session, *PACKAGES, *_group("test"))
    uid = str(UNPRIVILEGED_UID)
    with tempfile.TemporaryDirectory(prefix="unprivileged-") as scratch:
        os.chmod(scratch, 0o755)
        os.chown(scratch, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
        report = Path(scratch) / "junit.xml"
        session.run(
            *("setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"),
            *(str(Path(session.bin) / "python"), "-m", "pytest", "-m", "unprivileged"),
            *("-p", "no:cacheprovider", f"--basetemp={scratch}/tmp", f"--junitxml={report}"),
            *session.posargs,
            env={"HOME": scratch, "TMPDIR": scratch},
            external=True,
        )
        for option in _junit(session):
            shutil.copyfile(report, option.removeprefix("--junitxml="))


@nox.session(python=False)
def lock(session: nox.Session) -> None:
    """Rewrite .ci/constraints.txt; ``-- --upgrade`` moves every pin to the newest release.

    It pins everything the sessions install: the packages with the extras in ``PACKAGES``
    and the root dependency groups. ``-- --check`` changes nothing and fails when the file
    no longer pins all of that (uv keeps the pins already there, so only a change of
    requirements shows).
    """
    check = "--check" in session.posargs
    extra = [arg for arg in session.posargs if arg != "--check"]
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / CONSTRAINTS.name if check else CONSTRAINTS
        if check:
            shutil.copyfile(CONSTRAINTS, output)
        requirements = Path(scratch) / "packages.in"
        requirements.write_text("".join(f"{package}\n" for package in PACKAGES))
        session.run(
            *("uv", "pip", "compile", "--universal", "--python-version", "3.11", "--quiet"),
            *(f"--group=pyproject.toml:{g}" for g in ("test", "lint", "imports", "typecheck")),
            *(f"--no-emit-package={name}" for name in ("mtcommon", "matchmaker", "tasktool")),
            *("--no-annotate", "--custom-compile-command", "nox -s lock", "-o", str(output)),
            *extra,
            str(requirements),
            external=True,
        )
        if check and output.read_text() != CONSTRAINTS.read_text():
            session.error(f"{CONSTRAINTS.name} is stale: run `nox -s lock` and commit it")
