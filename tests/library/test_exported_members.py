"""The public API is exactly ``__all__``, for type checkers and at run time (in the spirit of
httpx's ``test_exported_members``)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

PACKAGES = ["matchmaker", "tasktool"]
PLUMBING = {"annotations", "TYPE_CHECKING", "lazy_exports"}
"""What ``__init__`` needs for itself; ``dir()`` does not show it."""


def _package(name: str) -> ModuleType:
    return importlib.import_module(name)


def _type_checking_names(package: ModuleType) -> set[str]:
    """The names the ``if TYPE_CHECKING:`` block of ``__init__`` re-exports to type checkers."""
    assert package.__file__ is not None
    tree = ast.parse(Path(package.__file__).read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for item in node.body:
                assert isinstance(item, ast.ImportFrom)
                for alias in item.names:
                    assert alias.asname == alias.name, f"{alias.name}: re-export as itself"
                    names.add(alias.name)
    return names


@pytest.mark.parametrize("name", PACKAGES)
def test_every_name_in_all_resolves(name: str) -> None:
    package = _package(name)
    assert len(package.__all__) == len(set(package.__all__))
    for member in package.__all__:
        assert getattr(package, member) is not None


@pytest.mark.parametrize("name", PACKAGES)
def test_type_checkers_see_what_runs(name: str) -> None:
    package = _package(name)
    assert _type_checking_names(package) == set(package.__all__) - {"__version__"}


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_member_is_in_all(name: str) -> None:
    package = _package(name)
    for member in package.__all__:
        getattr(package, member)  # load them all, then nothing else public may appear
    listed = {member for member in dir(package) if not member.startswith("_")}
    assert listed == set(package.__all__) - {"__version__"}
    namespace = {
        member
        for member, value in vars(package).items()
        if not member.startswith("_") and not inspect.ismodule(value)
    }
    assert namespace - set(package.__all__) == PLUMBING


@pytest.mark.parametrize("name", PACKAGES)
def test_exported_classes_and_functions_come_from_the_package(name: str) -> None:
    package = _package(name)
    for member in package.__all__:
        value = getattr(package, member)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith(f"{name}."), member
            assert value.__doc__, f"{name}.{member} has no docstring"


@pytest.mark.parametrize("name", PACKAGES)
def test_an_unknown_name_is_an_attribute_error(name: str) -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _package(name).no_such_name  # noqa: B018


@pytest.mark.parametrize("name", PACKAGES)
def test_the_package_is_typed(name: str) -> None:
    assert (Path(_package(name).__file__ or "").parent / "py.typed").is_file()


#: Names the tasktool API had twice or three times over, each beside the one kept:
#: ``load_context`` (not ``loader``), ``rank`` (not ``rank_next``/``next_document``),
#: ``validation_report`` (not ``check_tasks``), ``repository_stats`` (not
#: ``compute_stats``/``stats_document``), ``list_tasks`` (not ``tasks_document``).
OVERLAPS = {
    "loader",
    "rank_next",
    "next_document",
    "check_tasks",
    "compute_stats",
    "stats_document",
    "tasks_document",
    "create_tasks",
    "build_graph",
    "build_board",
    "plan_tracks",
}


def test_tasktool_has_one_name_per_idea() -> None:
    import tasktool

    assert OVERLAPS.isdisjoint(tasktool.__all__)
    assert len(tasktool.__all__) <= 40
