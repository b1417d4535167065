from __future__ import annotations

import pytest

from matchmaker.config import Limits
from matchmaker.core import current_project, resolve_hello
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.model import Project, ProjectKey

KEYED = Project(id="keyed", keys=(ProjectKey(type="shared-secret", secret="s3cret"),))
OPEN = Project(id="open", lockdown=True)


@pytest.fixture
def directory() -> ProjectDirectory:
    return ProjectDirectory([KEYED, OPEN])


@pytest.mark.parametrize(
    ("project", "credential", "require", "expected"),
    [
        (None, None, False, "default"),
        (None, None, True, "default"),
        ("open", None, False, "open"),
        ("anything", None, False, "anything"),
        (None, "s3cret", False, "keyed"),
        ("keyed", "s3cret", True, "keyed"),
    ],
)
def test_hello_resolves(
    directory: ProjectDirectory,
    project: str | None,
    credential: str | None,
    require: bool,
    expected: str,
) -> None:
    resolved, identity = resolve_hello(
        directory, project, credential, require_declared=require, now_ms=0, limits=Limits()
    )
    assert resolved.id == expected
    assert identity is None


@pytest.mark.parametrize(
    ("project", "credential", "require", "code"),
    [
        ("open", "s3cret", False, "project.forbidden"),
        (None, "wrong", False, "auth.invalid_credential"),
        ("keyed", None, False, "project.forbidden"),
        ("anything", None, True, "project.not_found"),
    ],
)
def test_hello_refuses(
    directory: ProjectDirectory,
    project: str | None,
    credential: str | None,
    require: bool,
    code: str,
) -> None:
    with pytest.raises(MatchmakerError) as caught:
        resolve_hello(
            directory, project, credential, require_declared=require, now_ms=0, limits=Limits()
        )
    assert caught.value.code == code


def test_declared_project_is_returned_as_stored(directory: ProjectDirectory) -> None:
    assert current_project(directory, "open", None, require_declared=False) is OPEN


def test_implicit_project_has_no_rules(directory: ProjectDirectory) -> None:
    implicit = current_project(directory, "ghost", None, require_declared=False)
    assert implicit == Project(id="ghost")


def test_keys_added_later_apply_to_the_next_operation(directory: ProjectDirectory) -> None:
    current_project(directory, "ghost", None, require_declared=False)
    directory.put(Project(id="ghost", keys=(ProjectKey(type="shared-secret", secret="k"),)))
    with pytest.raises(MatchmakerError, match="requires a credential"):
        current_project(directory, "ghost", None, require_declared=False)
    assert current_project(directory, "ghost", "k", require_declared=False).id == "ghost"
