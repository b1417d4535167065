"""The dependency graph: who waits on whom, what can start now, cycles and chains.

One :class:`TaskGraph` is built per run in linear time and answers every
question the planning commands ask without rescanning the task list:

- **actionable**: status ``pending`` or ``in-progress``, every dependency
  exists (active or archived) and is met, and no child is unresolved;
- **blocked** (one meaning everywhere): has an unmet dependency. A dependency
  is met when the task it names, active or archived, is completed; a missing
  id is never met, and neither is a cancelled task.

Edges point from a dependency to its dependent ("must be done before").
"""

from __future__ import annotations

from collections.abc import Collection, Container, Mapping, Sequence

from tasktool.model.task import Status, Task, natural_key

__all__ = [
    "ACTIONABLE_STATUSES",
    "Chains",
    "TaskGraph",
    "build_graph",
    "find_cycles",
    "longest_chains",
]

ACTIONABLE_STATUSES = frozenset({Status.PENDING.value, Status.IN_PROGRESS.value})
_COMPLETED = Status.COMPLETED.value


class TaskGraph:
    """Indexes over one run's tasks; archived tasks only count as dependencies."""

    __slots__ = (
        "all_tasks",
        "archived",
        "archived_count",
        "by_id",
        "children",
        "dependents",
        "tasks",
        "unique",
    )

    def __init__(
        self,
        *,
        all_tasks: tuple[Task, ...],
        tasks: tuple[Task, ...],
        unique: tuple[Task, ...],
        by_id: dict[str, Task],
        archived: dict[str, Task],
        dependents: dict[str, list[str]],
        children: dict[str, list[str]],
        archived_count: int,
    ) -> None:
        #: Every task the graph was built from, in the order given.
        self.all_tasks = all_tasks
        #: Active tasks in natural id order, duplicate ids included.
        self.tasks = tasks
        #: The first active task of each id, in natural id order (what the graph indexes).
        self.unique = unique
        self.by_id = by_id
        self.archived = archived
        #: Archived task files, duplicate ids included.
        self.archived_count = archived_count
        self.dependents = dependents
        self.children = children

    def dependency_met(self, dep_id: str) -> bool:
        """The task it names (active, else archived) is completed."""
        task = self.by_id.get(dep_id) or self.archived.get(dep_id)
        return task is not None and task.status == _COMPLETED

    def unmet_dependencies(self, task: Task) -> list[str]:
        return [dep for dep in task.dependencies if not self.dependency_met(dep)]

    def is_blocked(self, task: Task) -> bool:
        """Has an unmet dependency (missing, or not completed)."""
        return any(not self.dependency_met(dep) for dep in task.dependencies)

    def unresolved_children(self, task: Task) -> list[str]:
        by_id = self.by_id
        return [child for child in self.children.get(task.id, ()) if not by_id[child].resolved]

    def is_actionable(self, task: Task) -> bool:
        """Pending or in progress, nothing it waits on left, no unfinished child."""
        return (
            task.status in ACTIONABLE_STATUSES
            and not self.is_blocked(task)
            and not (task.id in self.children and self.unresolved_children(task))
        )

    def actionable(self) -> list[Task]:
        """Every actionable task, in natural id order (of a duplicated id, the first file).

        :meth:`is_actionable` inlined: this runs over every task on every ``next``.
        """
        met = self.dependency_met
        children = self.children
        return [
            task
            for task in self.unique
            if task.status in ACTIONABLE_STATUSES
            and (not task.dependencies or all(map(met, task.dependencies)))
            and not (task.id in children and self.unresolved_children(task))
        ]

    def references(self, task_id: str) -> list[str]:
        """Ids of the other tasks, active or archived, that depend on ``task_id`` or are its
        children, in natural order."""
        found = {*self.dependents.get(task_id, ()), *self.children.get(task_id, ())}
        for task in self.archived.values():  # archived tasks are not indexed (few, resolved)
            if task_id in task.dependencies or task.parent == task_id:
                found.add(task.id)
        found.discard(task_id)
        return sorted(found, key=natural_key)

    def dependency_cycles(self) -> list[list[str]]:
        """:func:`find_cycles` over the dependencies between active tasks."""
        by_id, dependents = self.by_id, self.dependents
        edges: dict[str, list[str]] = {}
        # A task on a cycle depends on another and has a dependent: the others are left
        # out (find_cycles ignores what they would have removed anyway).
        for task in self.unique:
            if task.dependencies and task.id in dependents:
                existing = [dep for dep in task.dependencies if dep in by_id]
                if existing:
                    edges[task.id] = existing
        return find_cycles(edges)

    def parent_cycles(self) -> list[list[str]]:
        """:func:`find_cycles` over the parent links between active tasks."""
        by_id = self.by_id
        return find_cycles(
            {
                task.id: [task.parent]
                for task in self.unique
                if task.parent is not None and task.parent in by_id
            }
        )

    def dependency_edges(self) -> dict[str, list[str]]:
        """``id -> ids it depends on`` restricted to active tasks that exist."""
        by_id = self.by_id
        return {task.id: [dep for dep in task.dependencies if dep in by_id] for task in self.unique}


def build_graph(tasks: Sequence[Task], *, ordered: bool = False) -> TaskGraph:
    """Index tasks by id, dependents and children (linear in tasks plus edges).

    ``ordered``: the active tasks already come in natural id order (as a scan returns them).
    """
    archived: dict[str, Task] = {}
    archived_count = 0
    active: list[Task] = []
    by_id: dict[str, Task] = {}
    unique: list[Task] = []
    dependents: dict[str, list[str]] = {}
    children: dict[str, list[str]] = {}
    add_active, add_unique = active.append, unique.append
    # Unordered tasks are sorted first; ordered ones are indexed in the same pass that
    # splits off the archived (one pass over the tasks instead of three).
    for task in tasks if ordered else sorted(tasks, key=lambda task: natural_key(task.id)):
        task_id = task.id
        if task.archived:
            archived_count += 1
            if task_id not in archived:
                archived[task_id] = task
            continue
        add_active(task)
        if task_id in by_id:
            continue
        by_id[task_id] = task
        add_unique(task)
        deps = task.dependencies
        if deps:  # most tasks have none
            for dep in dict.fromkeys(deps) if len(deps) > 1 else deps:
                if dep in dependents:
                    dependents[dep].append(task_id)
                else:
                    dependents[dep] = [task_id]
        if task.parent is not None:
            children.setdefault(task.parent, []).append(task_id)
    return TaskGraph(
        all_tasks=tuple(tasks),
        tasks=tuple(active),
        unique=tuple(unique),
        by_id=by_id,
        archived=archived,
        dependents=dependents,
        children=children,
        archived_count=archived_count,
    )


def _peel(edges: Mapping[str, Sequence[str]]) -> set[str]:
    """Nodes left after repeatedly removing those nothing points to: cycles and what they reach."""
    indegree = dict.fromkeys(edges, 0)
    for successors in edges.values():
        for succ in successors:
            if succ in indegree:
                indegree[succ] += 1
    queue = [node for node, count in indegree.items() if count == 0]
    for node in queue:  # the list grows while it is walked
        for succ in edges[node]:
            if succ in indegree:
                indegree[succ] -= 1
                if indegree[succ] == 0:
                    queue.append(succ)
    return set(indegree) - set(queue)


def find_cycles(edges: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """One cycle per strongly connected component that has one, as ``[a, b, ..., a]``.

    ``edges`` maps a node to its successors; successors that are not keys are
    ignored. Iterative Tarjan, so deep chains do not hit the recursion limit.
    Each cycle starts at its naturally smallest node; cycles come sorted.
    """
    # Peeling first leaves Tarjan only the (usually empty) part that can hold cycles.
    remaining = _peel(edges)
    if not remaining:
        return []
    edges = {
        node: [s for s in edges[node] if s in remaining] for node in edges if node in remaining
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            successors = edges[node]
            while position < len(successors):
                succ = successors[position]
                position += 1
                if succ not in edges:
                    continue
                if succ not in index:
                    work.append((node, position))
                    work.append((succ, 0))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in edges[node]:
                        components.append(component)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    cycles = [_cycle_in(component, edges) for component in components]
    return sorted(cycles, key=lambda cycle: natural_key(cycle[0]))


def _cycle_in(component: list[str], edges: Mapping[str, Sequence[str]]) -> list[str]:
    """A simple cycle through the smallest node of a strongly connected component."""
    members = set(component)
    start = min(component, key=natural_key)
    parent: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    # Breadth-first inside the component finds a shortest way back to start.
    while frontier:
        next_frontier: list[str] = []
        for node in frontier:
            for succ in edges[node]:
                if succ == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if succ in members and succ not in seen:
                    seen.add(succ)
                    parent[succ] = node
                    next_frontier.append(succ)
        frontier = next_frontier
    raise AssertionError("a strongly connected component always holds a cycle")


class Chains:
    """Longest dependency chains through a set of tasks (tasks in cycles left out).

    A task linked to no other included task is a chain of one on its own: it has no
    entry in ``up`` (most tasks of a large repository; see :func:`longest_chains`).
    """

    __slots__ = ("down", "length", "longest", "up")

    def __init__(
        self, up: dict[str, int], down: dict[str, int], length: int, longest: list[str]
    ) -> None:
        #: Tasks on the longest chain ending at each node (the node counted; 1 when absent).
        self.up = up
        #: Tasks on the longest chain starting at each node that is on a longest chain
        #: (of two tasks or more); no entry for the others.
        self.down = down
        self.length = length
        #: One longest chain, dependency first, chosen in natural id order.
        self.longest = longest

    def on_longest(self, task_id: str) -> bool:
        """On some chain of maximal length (only chains of two tasks or more count)."""
        return task_id in self.down


def longest_chains(graph: TaskGraph, leave_out: Collection[str] = ()) -> Chains:
    """Longest chains over the active tasks, those with a status in ``leave_out`` left out
    (a status test, not a predicate: a call per task costs).

    Written as tight loops over dicts: this runs over every task on every ``next``
    and ``stats``. One topological pass forward gives each task the longest chain
    ending at it (``up``) and the length; then only the tasks on a longest chain are
    walked back from its ends (a chain's tasks sit at ``up`` 1, 2, ... length). Only
    tasks linked to another included task enter the forward pass: most tasks have no
    dependency and many no dependent, and such a task is a chain of one whatever the
    others do (looked at again only when no chain is longer).
    """
    dependents = graph.dependents
    included: Sequence[Task]
    members: Container[str]
    if leave_out:
        included = [task for task in graph.unique if task.status not in leave_out]
        members = {task.id for task in included}
    else:
        included, members = graph.unique, graph.by_id
    indegree: dict[str, int] = {}  # tasks with an included dependency
    order: list[str] = []  # starts as the tasks with none but with a dependent
    for task in included:
        deps = task.dependencies
        if deps:
            count = 0
            for dep in set(deps) if len(deps) > 1 else deps:
                if dep in members:
                    count += 1
            if count:
                indegree[task.id] = count
                continue
        if task.id in dependents:
            order.append(task.id)
    reach: dict[str, int] = {}
    length, ends = 0, []  # tasks in order get their final reach when they enter it
    for node in order:  # Kahn: the list grows while it is walked; tasks in cycles never enter.
        successors = dependents.get(node)
        if successors is None:
            continue
        step = reach.get(node, 1) + 1
        for succ in successors:
            left = indegree.get(succ)
            if left is None:
                continue
            if reach.get(succ, 1) < step:
                reach[succ] = step
            indegree[succ] = left - 1
            if left == 1:
                order.append(succ)
                if reach[succ] > length:
                    length, ends = reach[succ], [succ]
                elif reach[succ] == length:
                    ends.append(succ)
    if length < 2:  # no chain of two: the first included task outside cycles, alone
        free = [task.id for task in included if task.id not in indegree]
        first = min(free, key=natural_key, default=None)
        return Chains(reach, {}, 0 if first is None else 1, [] if first is None else [first])
    down = _back_from(ends, graph.by_id, members, reach, length)
    return Chains(reach, down, length, _longest(order, down, dependents, length))


def _back_from(
    ends: list[str],
    by_id: dict[str, Task],
    members: Container[str],
    reach: dict[str, int],
    length: int,
) -> dict[str, int]:
    """``down`` of every task on a longest chain: from the chains' ends back through the
    dependencies one step shorter (each of those is on a longest chain too)."""
    down = dict.fromkeys(ends, 1)
    stack = list(ends)
    while stack:
        node = stack.pop()
        before = reach.get(node, 1) - 1
        if not before:
            continue
        for dep in by_id[node].dependencies:
            if dep in members and dep not in down and reach.get(dep, 1) == before:
                down[dep] = length - before + 1
                stack.append(dep)
    return down


def _longest(
    order: list[str], down: dict[str, int], dependents: dict[str, list[str]], length: int
) -> list[str]:
    """The longest chain that comes first in natural id order, step by step."""
    current = min((node for node in order if down.get(node) == length), key=natural_key)
    longest = [current]
    while down[current] > 1:
        current = min(
            (s for s in dependents[current] if down.get(s) == down[current] - 1),
            key=natural_key,
        )
        longest.append(current)
    return longest
