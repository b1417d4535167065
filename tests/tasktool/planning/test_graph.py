"""The dependency graph: actionable, blocked, cycles and longest chains."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasktool.model.task import Task
from tasktool.planning.graph import build_graph, find_cycles, longest_chains

from .conftest import TaskFactory

Spec = dict[str, Any]


@pytest.mark.parametrize(
    ("others", "subject", "actionable", "blocked"),
    [
        pytest.param([], {"status": "pending"}, True, False, id="pending-alone"),
        pytest.param([], {"status": "in-progress"}, True, False, id="in-progress"),
        pytest.param([], {"status": "blocked"}, False, False, id="status-blocked"),
        pytest.param([], {"status": "in-review"}, False, False, id="in-review"),
        pytest.param([], {"status": "completed"}, False, False, id="completed"),
        pytest.param(
            [{"id": "1", "status": "completed"}],
            {"dependencies": ["1"]},
            True,
            False,
            id="dep-completed",
        ),
        pytest.param(
            [{"id": "1", "status": "cancelled"}],
            {"dependencies": ["1"]},
            False,
            True,
            id="dep-cancelled-is-unmet",
        ),
        pytest.param(
            [{"id": "1", "status": "in-progress"}],
            {"dependencies": ["1"]},
            False,
            True,
            id="dep-open",
        ),
        pytest.param([], {"dependencies": ["404"]}, False, True, id="dep-missing"),
        pytest.param(
            [{"id": "1", "status": "completed", "archived": True}],
            {"dependencies": ["1"]},
            True,
            False,
            id="dep-archived-completed",
        ),
        pytest.param(
            [{"id": "1", "status": "cancelled", "archived": True}],
            {"dependencies": ["1"]},
            False,
            True,
            id="dep-archived-cancelled",
        ),
        pytest.param(
            [{"id": "1", "status": "pending", "parent": "9"}], {}, False, False, id="open-child"
        ),
        pytest.param(
            [{"id": "1", "status": "cancelled", "parent": "9"}],
            {},
            True,
            False,
            id="resolved-child",
        ),
    ],
)
def test_actionable_and_blocked(
    make: TaskFactory, others: list[Spec], subject: Spec, actionable: bool, blocked: bool
) -> None:
    tasks = [make(**spec) for spec in others]
    task = make("9", **subject)
    graph = build_graph([*tasks, task])
    assert graph.is_actionable(task) is actionable
    assert graph.is_blocked(task) is blocked


def test_indexes_both_ways_in_natural_order(make: TaskFactory) -> None:
    tasks = [
        make("10", dependencies=["2"]),
        make("2"),
        make("9", dependencies=["2", "2"], parent="2"),
    ]
    graph = build_graph(tasks)
    assert [task.id for task in graph.tasks] == ["2", "9", "10"]
    assert graph.dependents["2"] == ["9", "10"]
    assert graph.children["2"] == ["9"]


@pytest.mark.parametrize(
    ("edges", "cycles"),
    [
        ({"a": ["b"], "b": []}, []),
        ({"a": ["a"]}, [["a", "a"]]),
        ({"1": ["2"], "2": ["3"], "3": ["1"]}, [["1", "2", "3", "1"]]),
        (
            {"3": ["2"], "2": ["10"], "10": ["3"], "x": ["y"], "y": ["x"]},
            [["2", "10", "3", "2"], ["x", "y", "x"]],
        ),
        ({"a": ["b", "zz"], "b": ["c"], "c": ["a", "b"]}, [["a", "b", "c", "a"]]),
    ],
)
def test_find_cycles(edges: dict[str, list[str]], cycles: list[list[str]]) -> None:
    assert find_cycles(edges) == cycles


def test_find_cycles_survives_a_deep_chain() -> None:
    edges = {str(i): [str(i + 1)] for i in range(20_000)}
    edges["20000"] = ["0"]
    (cycle,) = find_cycles(edges)
    assert len(cycle) == 20_002


def test_longest_chain_and_critical_path(make: TaskFactory) -> None:
    tasks = [
        make("1"),
        make("2", dependencies=["1"]),
        make("3", dependencies=["2"]),
        make("4", dependencies=["1"]),
        make("5"),
        make("6", dependencies=["7"]),
        make("7", dependencies=["6"]),
    ]
    chains = longest_chains(build_graph(tasks))
    assert chains.length == 3
    assert chains.longest == ["1", "2", "3"]
    assert [t.id for t in tasks if chains.on_longest(t.id)] == ["1", "2", "3"]


def test_no_critical_path_without_a_chain(make: TaskFactory) -> None:
    chains = longest_chains(build_graph([make("1"), make("2")]))
    assert chains.length == 1
    assert not chains.on_longest("1")


def test_a_duplicated_id_is_one_candidate(make: TaskFactory) -> None:
    first, second = make("1", file_path="a/1.md"), make("1", file_path="b/1.md")
    graph = build_graph([second, first, make("2")])
    assert [task.file_path for task in graph.actionable()] == ["b/1.md", "tasks/2.md"]
    assert len(graph.tasks) == 3


def _has_cycle(edges: dict[str, list[str]]) -> bool:
    """Reference answer: some node reaches itself (plain search from every node)."""
    for start, successors in edges.items():
        stack, seen = list(successors), set()
        while stack:
            node = stack.pop()
            if node == start:
                return True
            if node in edges and node not in seen:
                seen.add(node)
                stack.extend(edges[node])
    return False


@given(
    st.dictionaries(st.sampled_from("abcdefgh"), st.lists(st.sampled_from("abcdefghz"), max_size=3))
)
@settings(max_examples=300, deadline=None)
def test_find_cycles_property(edges: dict[str, list[str]]) -> None:
    cycles = find_cycles(edges)
    assert bool(cycles) == _has_cycle(edges)
    members: set[str] = set()
    for cycle in cycles:
        assert cycle[0] == cycle[-1]
        assert len(set(cycle[:-1])) == len(cycle) - 1, "a cycle repeats a node"
        for source, target in itertools.pairwise(cycle):
            assert target in edges[source]
        assert not members & set(cycle), "two cycles from one component"
        members |= set(cycle)


@given(st.lists(st.lists(st.integers(0, 9), max_size=3), min_size=1, max_size=10))
@settings(max_examples=200, deadline=None)
def test_longest_chain_property(dependency_lists: list[list[int]]) -> None:
    """On acyclic graphs (dependencies only on lower ids) the chain is a longest path."""
    tasks = [
        Task(id=str(i), title="t", dependencies=tuple(str(d) for d in deps if d < i))
        for i, deps in enumerate(dependency_lists)
    ]
    chains = longest_chains(build_graph(tasks))
    depth: dict[str, int] = {}
    for task in tasks:  # ids ascend, so dependencies come first
        depth[task.id] = 1 + max((depth[dep] for dep in task.dependencies), default=0)
    assert chains.length == max(depth.values())
    assert len(chains.longest) == chains.length
    for dependency, dependent in itertools.pairwise(chains.longest):
        assert dependency in {t.id: t for t in tasks}[dependent].dependencies
