"""The dashboard's pages, rendered from the same JSON documents the API serves.

Each function takes documents (plain JSON data) and :class:`Links` and
returns a whole HTML page, so the live server and the static export render
identically. The task table filters and sorts in the browser (``app.js``)
over ``data-*`` attributes of its rows, or, when the server pages it
(:mod:`tasktool.web.paged.table`), asks the server; the pages work without script,
minus live filtering, editing and live reload.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tasktool.planning.board import GROUP_FIELDS
from tasktool.planning.ranking import DEFAULT_LIMIT
from tasktool.web.forms import create_form, edit_form
from tasktool.web.graph.graphfocus import part_notice
from tasktool.web.graph.graphsvg import graph_svg
from tasktool.web.layout import Links, chips, data_attributes, h, layout, pill, task_link
from tasktool.web.markdown import markdown_html
from tasktool.web.paged.cards import more_cards
from tasktool.web.paged.pager import count_line, page_inputs, pager, sort_state

if TYPE_CHECKING:
    from tasktool.web.graph.graphfocus import GraphPart
    from tasktool.web.paged.table import TablePage

__all__ = [
    "SELECT_FILTERS",
    "TABLE_COLUMNS",
    "NextOptions",
    "board_page",
    "error_page",
    "graph_page",
    "next_page",
    "task_page",
    "tasks_page",
    "validate_page",
]


@dataclass(frozen=True)
class NextOptions:
    """The options of ``next``, as the CLI has them."""

    limit: int = DEFAULT_LIMIT
    quick_wins: bool = False
    strict_phases: bool = True
    filters: tuple[str, ...] = ()


TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "ID"),
    ("title", "Title"),
    ("status", "Status"),
    ("priority", "Priority"),
    ("effort", "Effort"),
    ("phase", "Phase"),
    ("owner", "Owner"),
    ("tags", "Tags"),
)
#: Table filters offered as drop-downs: (field, label).
SELECT_FILTERS: tuple[tuple[str, str], ...] = (
    ("status", "Status"),
    ("priority", "Priority"),
    ("effort", "Effort"),
    ("phase", "Phase"),
    ("owner", "Owner"),
    ("tags", "Tag"),
)


def _options(values: Sequence[str], selected: str | None, *, blank: str) -> str:
    items = [f'<option value="">{h(blank)}</option>']
    items += [
        f'<option value="{h(v)}"' + (" selected" if v == selected else "") + f">{h(v)}</option>"
        for v in values
    ]
    return "".join(items)


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _values(tasks: Sequence[Mapping[str, Any]], field: str, known: Sequence[str]) -> list[str]:
    seen = {v for t in tasks for v in _as_list(t[field]) if v}
    return [*[v for v in known if v in seen], *sorted(seen - set(known))]


def _cell(task: Mapping[str, Any], field: str, links: Links) -> str:
    value = task[field]
    if field in {"id", "title"}:
        return task_link(links, task["id"], value)
    if field in {"status", "priority"}:
        return pill(field, value)
    if field == "tags":
        return chips(value) or '<span class="muted">–</span>'
    return h(value) if value else '<span class="muted">–</span>'


def tasks_page(
    tasks: Sequence[Mapping[str, Any]],
    vocabulary: Mapping[str, Sequence[str]],
    links: Links,
    table: TablePage | None = None,
) -> str:
    """The task table with search, drop-down filters and sortable columns; with ``table``,
    one page of it, filtered and sorted on the server (:mod:`tasktool.web.paged.table`)."""
    chosen = dict(table.query.chosen) if table else {}
    selects = "".join(
        f'<label>{label} <select data-filter="{field}" name="{field}">'
        + _options(
            table.choices[field] if table else _values(tasks, field, vocabulary.get(field, ())),
            chosen.get(field),
            blank="any",
        )
        + "</select></label>"
        for field, label in SELECT_FILTERS
    )
    head = "".join(
        f'<th scope="col"{sort_state(table, field)}>'
        f'<button type="button" data-sort="{field}">{label}</button></th>'
        for field, label in TABLE_COLUMNS
    )
    rows = []
    for task in tasks:
        search = " ".join(
            str(v) for v in (task["id"], task["title"], task["owner"], *task["tags"]) if v
        ).lower()
        attributes = data_attributes(
            {
                **{field: task[field] for field, _ in SELECT_FILTERS},
                "id": task["id"],
                "title": task["title"],
                "search": search,
            }
        )
        cells = "".join(f"<td>{_cell(task, field, links)}</td>" for field, _ in TABLE_COLUMNS)
        resolved = ' class="resolved"' if task["status"] in {"completed", "cancelled"} else ""
        rows.append(
            f'<tr{attributes}{resolved} data-href="{h(links.task(task["id"]))}">{cells}</tr>'
        )
    # Live, the words are also looked for in the bodies, by the API (as `search` does).
    search_api = "" if links.static else f' data-search-api="{h(links.api("tasks"))}"'
    searched = "id, title, owner, tag" + ("" if links.static else ", description")
    paged = ' method="get" data-paged' if table else ""
    text = h(table.query.text) if table else ""
    empty = "No tasks match." if table else "No tasks yet."
    body = f"""<h1>Tasks</h1>
{create_form(vocabulary, links) if links.editable else ""}
<form class="filters" role="search" data-table-filters{search_api}{paged}>
<label class="search">Search <input type="search" data-search name="q" value="{text}"
 placeholder="{searched}  ( / )" autocomplete="off"></label>
{selects}
{page_inputs(table)}<button type="reset">Clear</button>
</form>
{count_line(table, len(tasks))}
<div class="table-wrap">
<table class="tasks" data-task-table{" data-paged" if table else ""}>
<thead><tr>{head}</tr></thead>
<tbody>
{"".join(rows) or f'<tr class="empty"><td colspan="8">{empty}</td></tr>'}
</tbody>
</table>
</div>
{pager(table, links)}"""
    return layout(links, title="Tasks", active="tasks", body=body)


def _task_list(
    items: Sequence[Mapping[str, Any]], links: Links, *, unmet: Sequence[str] = ()
) -> str:
    if not items:
        return '<p class="muted">none</p>'
    entries = []
    for item in items:
        marker = ' <span class="pill warn">unmet</span>' if item["id"] in unmet else ""
        title = h(item.get("title")) if item.get("title") else '<span class="muted">missing</span>'
        entries.append(
            f"<li>{task_link(links, item['id'])} {title} {pill('status', item.get('status'))}"
            f"{marker}</li>"
        )
    return f'<ul class="links">{"".join(entries)}</ul>'


_DETAIL_FIELDS = (
    "status", "priority", "effort", "type", "owner", "phase", "parent", "group",
    "created_at", "completed_at", "cancelled_at", "tags", "touches", "context", "pr",
    "external_id", "file_path",
)  # fmt: skip


def _criteria(criteria: Mapping[str, Any] | None) -> str:
    """The acceptance criteria checklist and its progress (Backlog.md's ``ac: 2/3``)."""
    if not criteria:
        return ""
    items = "".join(
        f'<li><input type="checkbox" disabled{" checked" if item["checked"] else ""}> '
        f"{h(item['text'])}</li>"
        for item in criteria["items"]
    )
    return f"""<section aria-labelledby="ac-heading"><h2 id="ac-heading">Acceptance criteria
<span class="muted">{criteria["done"]}/{criteria["total"]}</span></h2>
<ul class="criteria">{items}</ul></section>"""


def task_page(
    detail: Mapping[str, Any],
    related: Mapping[str, Mapping[str, Any]],
    vocabulary: Mapping[str, Sequence[str]],
    links: Links,
) -> str:
    """One task: its fields, body, dependencies both ways, children, worklog, edit form.

    ``related`` has ``{"id", "title", "status"}`` of the tasks it names.
    """
    by_id = related
    rows = []
    for field in _DETAIL_FIELDS:
        value = detail.get(field)
        if not value:
            continue
        if field in {"status", "priority"}:
            shown = pill(field, value)
        elif field == "parent":
            shown = task_link(links, value)
        elif isinstance(value, list | tuple):
            shown = chips(value)
        else:
            shown = h(value)
        rows.append(f"<dt>{h(field.replace('_', ' '))}</dt><dd>{shown}</dd>")
    worklog = detail.get("worklog")
    if worklog:
        rows.append(
            f"<dt>worklog</dt><dd>{worklog['entries']} entries, last {h(worklog['last'])}</dd>"
        )
    criteria = detail.get("acceptance")
    if criteria:
        rows.append(f"<dt>acceptance</dt><dd>{criteria['done']}/{criteria['total']} done</dd>")
    dependencies = [by_id.get(dep, {"id": dep}) for dep in detail["dependencies"]]
    dependents = [by_id.get(dep, {"id": dep}) for dep in detail["dependents"]]
    state = '<span class="pill warn">blocked</span>' if detail["blocked"] else ""
    body_text = detail["body"].strip("\n")
    body = f"""<p class="crumbs"><a href="{h(links.page("tasks"))}">Tasks</a> ›</p>
<h1><span class="task-id">{h(detail["id"])}</span> {h(detail["title"])}
{pill("status", detail["status"])} {state}</h1>
<div class="detail">
<section aria-label="Fields"><dl class="fields">{"".join(rows)}</dl></section>
<section aria-labelledby="deps-heading">
<h2 id="deps-heading">Depends on</h2>
{_task_list(dependencies, links, unmet=detail["unmet_dependencies"])}
<h2>Needed by</h2>
{_task_list(dependents, links)}
<h2>Children</h2>
{_task_list(detail["children"], links)}
</section>
</div>
<section aria-labelledby="body-heading"><h2 id="body-heading">Description</h2>
{markdown_html(body_text) if body_text else '<p class="muted">No description.</p>'}
</section>
{_criteria(criteria)}
{edit_form(detail, vocabulary, links) if links.editable else ""}"""
    return layout(
        links, title=f"{detail['id']} {detail['title']}", active="tasks", body=body,
        attributes={"task": detail["id"]},
    )  # fmt: skip


def _card_meta(card: Mapping[str, Any], group_by: str) -> str:
    parts = [
        pill(field, card[field])
        for field in ("status", "priority")
        if card[field] and field != group_by
    ]
    if card["owner"] and group_by != "owner":
        parts.append(f'<span class="muted">{h(card["owner"])}</span>')
    return " ".join(parts)


def board_page(
    board: Mapping[str, Any], links: Links, shown: Mapping[str, int] | None = None
) -> str:
    """Active tasks in columns by one field; a link per field to regroup. A column cut
    short (its ``count`` is more than its ``tasks``) ends with a link showing
    :data:`~tasktool.web.paged.cards.MORE_CARDS` more (``shown``: the counts asked so far)."""
    group_by = board["group_by"]
    switch = " ".join(
        f'<a href="{h(links.page("board", group_by=field))}"'
        + (' aria-current="true"' if field == group_by else "")
        + f">{h(field)}</a>"
        for field in GROUP_FIELDS
    )
    columns = []
    for column in board["columns"]:
        cards = "".join(
            f'<li class="card status-{h(card["status"])}">'
            f"{task_link(links, card['id'], card['id'])} {h(card['title'])}"
            f'<div class="meta">{_card_meta(card, group_by)}</div></li>'
            for card in column["tasks"]
        )
        columns.append(
            f'<section class="column" aria-label="{h(column["name"])}">'
            f'<h2>{h(column["name"])} <span class="muted" data-column-count>{column["count"]}'
            f'</span></h2><ul class="cards">{cards}</ul>'
            f"{more_cards(column, group_by, shown or {}, links)}</section>"
        )
    body = f"""<h1>Board <span class="muted">by {h(group_by)}</span></h1>
<p class="switch">Group by: {switch}</p>
<div class="board">{"".join(columns)}</div>"""
    return layout(links, title=f"Board by {group_by}", active="board", body=body)


def graph_page(graph: Mapping[str, Any], links: Links, part: GraphPart | None = None) -> str:
    """The dependency graph as an SVG (edges point from a dependency to what waits on it);
    with ``part``, the part of a large graph it is (:mod:`tasktool.web.graph.graphfocus`)."""
    cycles = "".join(f"<li>{h(' → '.join(cycle))}</li>" for cycle in graph["cycles"])
    warning = (
        f'<div class="notice warn"><p>Dependency cycles:</p><ul>{cycles}</ul></div>'
        if cycles
        else ""
    )
    legend = " ".join(
        pill("status", status)
        for status in ("pending", "blocked", "in-progress", "in-review", "completed", "cancelled")
    )
    svg = graph_svg(graph, links) if graph["nodes"] else '<p class="muted">No tasks.</p>'
    body = f"""<h1>Dependency graph</h1>
<p class="muted">Arrows go from a dependency to the task that waits on it. {legend}
<span class="pill actionable">actionable</span> outline marks tasks that can start now.</p>
{part_notice(part, links)}
{warning}
<div class="graph-wrap">{svg}</div>"""
    return layout(links, title="Graph", active="graph", body=body)


def next_page(ranked: Sequence[Mapping[str, Any]], options: NextOptions, links: Links) -> str:
    """What to work on next, with each score's reasons."""
    rows = "".join(
        f'<tr><td class="num">{item["rank"]}</td><td>{task_link(links, item["id"])}</td>'
        f"<td>{task_link(links, item['id'], item['title'])}</td>"
        f'<td class="num"><strong>{item["score"]}</strong></td>'
        f"<td>{pill('priority', item['priority'])}</td><td>{h(item['effort'] or '–')}</td>"
        f"<td>{h(item['phase'] or '–')}</td><td>"
        + " ".join(
            f'<span class="chip" title="{h(r["detail"])}">{h(r["factor"])} +{r["points"]}</span>'
            for r in item["reasons"]
            if r["points"]
        )
        + "</td></tr>"
        for item in ranked
    )
    form = ""
    if not links.static:
        quick = " checked" if options.quick_wins else ""
        strict = " checked" if options.strict_phases else ""
        form = f"""<form class="filters" method="get">
<label>Limit <input type="number" name="limit" min="0" value="{options.limit}"></label>
<label><input type="checkbox" name="quick_wins" value="true"{quick}> Quick wins only</label>
<input type="hidden" name="strict_phases" value="false">
<label><input type="checkbox" name="strict_phases" value="true"{strict}>
Strict phases</label>
<button type="submit">Rank</button>
</form>"""
    table = (
        f"""<div class="table-wrap"><table class="tasks">
<thead><tr><th>#</th><th>ID</th><th>Title</th><th>Score</th><th>Priority</th><th>Effort</th>
<th>Phase</th><th>Why</th></tr></thead><tbody>{rows}</tbody></table></div>"""
        if ranked
        else '<p class="notice">No actionable tasks.</p>'
    )
    body = f"<h1>Next</h1>\n{form}\n{table}"
    return layout(links, title="Next", active="next", body=body)


def validate_page(report: Mapping[str, Any], links: Links) -> str:
    """The ``validate`` report: errors, then warnings."""

    def table(items: Sequence[Mapping[str, Any]], kind: str) -> str:
        if not items:
            return f'<p class="muted">No {kind}.</p>'
        rows = "".join(
            f"<tr><td><code>{h(item['code'])}</code></td>"
            f"<td>{task_link(links, item['task_id']) if item.get('task_id') else ''}</td>"
            f'<td>{h(item["message"])}</td><td class="muted">{h(item.get("file", ""))}</td></tr>'
            for item in items
        )
        return (
            f'<table class="tasks {kind}"><thead><tr><th>Code</th><th>Task</th><th>Message</th>'
            f"<th>File</th></tr></thead><tbody>{rows}</tbody></table>"
        )

    errors, warnings = report["errors"], report["warnings"]
    verdict = (
        f'<p class="notice {"bad" if errors else "good"}">'
        f"{'Invalid' if errors else 'Valid'}: {len(errors)} errors, {len(warnings)} warnings</p>"
    )
    body = (
        f"<h1>Validate</h1>\n{verdict}\n<h2>Errors</h2>\n{table(errors, 'errors')}\n"
        f"<h2>Warnings</h2>\n{table(warnings, 'warnings')}"
    )
    return layout(links, title="Validate", active="validate", body=body)


def error_page(error: Mapping[str, Any], links: Links) -> str:
    """An error the dashboard could not serve a page for."""
    body = (
        f'<h1>Error</h1><p class="notice bad">{h(error["message"])} '
        f"<code>[{h(error['code'])}]</code></p>"
        f'<p><a href="{h(links.page("tasks"))}">Back to the tasks</a></p>'
    )
    return layout(links, title="Error", active="", body=body)
