"""Properties: each fast path of the planning commands gives the answer of the plain one.

``stats`` counts columns without building the board, ``board`` and the graph skip
their sort when the tasks come in natural id order (as a scan returns them), and
``stats``/``validate`` accept the repository's graph instead of the task list, and
plain tables are built a column at a time; longest chains leave unlinked tasks out.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from tasktool.config import LoadedConfig
from tasktool.files.scanning.scan import ScanResult
from tasktool.model.config import Config
from tasktool.model.task import RESOLVED_STATUSES, Task, natural_key
from tasktool.planning.board import GROUP_FIELDS, build_board, count_columns, count_fields
from tasktool.planning.checks import check_tasks
from tasktool.planning.graph import TaskGraph, build_graph, longest_chains
from tasktool.planning.repository import Repository
from tasktool.planning.stats import COUNTED_FIELDS, compute_stats
from tasktool.present.documents import task_detail
from tasktool.present.render import cell, plain_table

from .test_ranking_properties import PHASES, task_graphs

WORDS = st.sampled_from(["", "ui", "api", "db", "10", "9"])


@st.composite
def varied_tasks(draw: st.DrawFn) -> list[Task]:
    """:func:`task_graphs` with tags, owners, groups and a few unknown values added."""
    return [
        msgspec.structs.replace(
            task,
            tags=tuple(draw(st.lists(WORDS, max_size=3))),
            owner=draw(st.one_of(st.none(), WORDS)),
            group=draw(st.one_of(st.none(), WORDS)),
            status=draw(st.sampled_from([task.status, task.status, "weird"])),
        )
        for task in draw(task_graphs())
    ]


def _natural(tasks: list[Task]) -> list[Task]:
    """Active tasks in natural id order, then archived ones (a repository's ``all_tasks``)."""
    ordered = sorted(tasks, key=lambda task: natural_key(task.id))
    return [t for t in ordered if not t.archived] + [t for t in ordered if t.archived]


@given(tasks=varied_tasks(), seed=st.integers())
@settings(max_examples=150, deadline=None)
def test_fast_paths_agree_with_the_plain_ones(tasks: list[Task], seed: int) -> None:
    config = Config(phases=PHASES)
    shuffled = list(tasks)
    random.Random(seed).shuffle(shuffled)
    natural = _natural(tasks)
    active = [task for task in natural if not task.archived]
    for field in GROUP_FIELDS:
        board = build_board(shuffled, config, field)
        assert build_board(active, config, field, ordered=True) == board
        columns = tuple((column.name, len(column.tasks)) for column in board.columns)
        assert count_columns(active, config, field) == columns
    assert count_fields(active, config, COUNTED_FIELDS) == {
        field: count_columns(active, config, field) for field in COUNTED_FIELDS
    }
    graph = build_graph(natural, ordered=True)
    stats = compute_stats(graph, config)
    assert stats == compute_stats(shuffled, config)
    unresolved = [task for task in graph.tasks if not task.resolved]
    assert stats.blocked == sum(graph.is_blocked(task) for task in unresolved)
    assert stats.actionable == sum(graph.is_actionable(task) for task in unresolved)
    assert graph.actionable() == [task for task in graph.unique if graph.is_actionable(task)]
    assert check_tasks(graph, config) == check_tasks(natural, config)


def _row_at_a_time(rows: list[dict[str, object]], columns: tuple[str, ...]) -> str:
    """:func:`plain_table` as it was written before it went a column at a time."""
    table = [[column.upper() for column in columns]]
    table += [[cell(row.get(column)).replace("\n", " ") for column in columns] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    return "".join(
        "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip()
        + "\n"
        for line in table
    )


CELLS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(alphabet=" ab\né", max_size=6),
    st.lists(st.text(alphabet="ab ", max_size=3), max_size=3),
)


@given(
    rows=st.lists(st.dictionaries(st.sampled_from(["id", "title", "x"]), CELLS), max_size=6),
    columns=st.lists(st.sampled_from(["id", "title", "x", "y"]), min_size=1, max_size=4),
)
def test_plain_table_column_at_a_time_gives_the_same_text(
    rows: list[dict[str, object]], columns: list[str]
) -> None:
    assert plain_table(rows, columns) == _row_at_a_time(rows, tuple(columns))


def _reference_chains(graph: TaskGraph, include: Callable[[Task], bool]) -> tuple[object, ...]:
    """(length, longest chain, tasks on a longest chain) as :func:`longest_chains` found them
    before it left unlinked tasks out: every included task in both passes."""
    dependents = graph.dependents
    indegree = {task.id: 0 for task in graph.unique if include(task)}
    order = []
    for node in list(indegree):
        deps = graph.by_id[node].dependencies
        indegree[node] = sum(1 for dep in dict.fromkeys(deps) if dep in indegree)
        if not indegree[node]:
            order.append(node)
    reach = dict.fromkeys(indegree, 1)
    for node in order:
        for succ in dependents.get(node, ()):
            if succ in indegree:
                reach[succ] = max(reach[succ], reach[node] + 1)
                indegree[succ] -= 1
                if not indegree[succ]:
                    order.append(succ)
    down: dict[str, int] = {}
    for node in reversed(order):
        down[node] = 1 + max((down.get(succ, 0) for succ in dependents.get(node, ())), default=0)
    length = max(down.values(), default=0)
    longest = []
    if length:
        current = min((node for node in order if down[node] == length), key=natural_key)
        longest.append(current)
        while down[current] > 1:
            current = min(
                (s for s in dependents[current] if down.get(s) == down[current] - 1),
                key=natural_key,
            )
            longest.append(current)
    on = sorted(node for node in order if length >= 2 and reach[node] + down[node] - 1 == length)
    return length, longest, on


@given(tasks=varied_tasks())
@settings(max_examples=200, deadline=None)
def test_longest_chains_of_linked_tasks_only_agree_with_every_task(tasks: list[Task]) -> None:
    graph = build_graph(tasks)
    cases: list[tuple[frozenset[str], Callable[[Task], bool]]] = [
        (frozenset(), lambda task: True),
        (RESOLVED_STATUSES, lambda task: not task.resolved),
        (frozenset({"pending", "weird"}), lambda task: task.status not in {"pending", "weird"}),
    ]
    for leave_out, reference in cases:
        chains = longest_chains(graph, leave_out)
        on = sorted(task.id for task in graph.unique if chains.on_longest(task.id))
        assert (chains.length, chains.longest, on) == _reference_chains(graph, reference)


@st.composite
def tasks_with_copies(draw: st.DrawFn) -> list[Task]:
    """:func:`task_graphs` plus copies of some ids in other files (active or archived),
    with other links and statuses: the first file of an id is the one that counts."""
    tasks = draw(task_graphs())
    if not tasks:
        return tasks
    ids = st.sampled_from([task.id for task in tasks])
    copies = [
        msgspec.structs.replace(
            task,
            file_path=f"{task.id}-copy.md",
            archived=draw(st.booleans()),
            status=draw(st.sampled_from(["pending", "completed"])),
            dependencies=tuple(draw(st.lists(ids, max_size=2))),
            parent=draw(st.one_of(st.none(), ids)),
        )
        for task in draw(st.lists(st.sampled_from(tasks), max_size=4))
        if tasks
    ]
    return [*tasks, *copies]


@given(tasks=tasks_with_copies())
@settings(max_examples=200, deadline=None)
def test_get_links_agree_with_the_graph(tasks: list[Task]) -> None:
    """``get``'s dependents, children and unmet dependencies, found in one pass over the
    tasks, are what the repository's graph says."""
    natural = sorted(tasks, key=lambda task: (natural_key(task.id), task.file_path))
    scan = ScanResult(
        tasks=tuple(t for t in natural if not t.archived),
        archived=tuple(t for t in natural if t.archived),
        broken=(),
    )
    loaded = LoadedConfig(file=None, config=Config(task_dir="/nonexistent"), values={}, sources={})
    repo = Repository(loaded, scan)
    graph = repo.graph
    for task in repo.all_tasks:
        detail = task_detail(repo, task)
        unmet = graph.unmet_dependencies(task)
        assert detail["dependents"] == graph.dependents.get(task.id, [])
        assert [child["id"] for child in detail["children"]] == graph.children.get(task.id, [])
        assert detail["children"] == [
            {"id": c, "title": graph.by_id[c].title, "status": graph.by_id[c].status}
            for c in graph.children.get(task.id, [])
        ]
        assert (detail["unmet_dependencies"], detail["blocked"]) == (unmet, bool(unmet))
