"""How many cards each board column shows: the first :data:`BOARD_CARDS`, then more on asking.

A column's header always counts all its tasks; a column cut short ends with a
"Show more" link that adds :data:`MORE_CARDS` to it (``?show=pending:240``,
repeatable, one per column opened further) and, when the board's field is one
the task table filters by, a link to the whole column there, paged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task
from tasktool.planning.repository import Repository
from tasktool.web.layout import Links, h
from tasktool.web.paged.paging import Window
from tasktool.web.snapshot import Remember

__all__ = ["BOARD_CARDS", "FIRST_CARDS", "MORE_CARDS", "board_cut", "board_shown", "more_cards"]

BOARD_CARDS = 40
MORE_CARDS = 200
FIRST_CARDS = Window(0, BOARD_CARDS)
#: The board's fields the task table has a drop-down for, with the table's parameter.
_TABLE_FILTERS = {
    "status": "status",
    "priority": "priority",
    "effort": "effort",
    "phase": "phase",
    "owner": "owner",
    "tag": "tags",
}


def board_shown(request: Request) -> dict[str, int]:
    """The ``show`` parameters: ``COLUMN:CARDS`` each (the column's name, then a count)."""
    shown: dict[str, int] = {}
    for item in request.query_params.getlist("show"):
        name, _, count = item.rpartition(":")
        if not name or not count.isdigit():
            raise TaskToolError(
                "query parameter 'show' must be COLUMN:CARDS (a column's name and a number)",
                code="web.invalid_parameter",
            )
        shown[name] = int(count)
    return shown


def board_cut(
    repo: Repository,
    group_by: str,
    remember: Remember,
    shown: Mapping[str, int],
    window: Window = FIRST_CARDS,
) -> dict[str, Any]:
    """The board document with each column's tasks cut to what is shown (the first so
    many of a column ``shown`` names, else ``window`` of it), its ``count`` all of them;
    the columns are built once per kept repository."""
    from tasktool.planning.board import Column, build_board

    board = remember(
        ("board", group_by),
        lambda: build_board(repo.tasks, repo.config, group_by, ordered=True),
    )

    def cut(column: Column) -> Sequence[Task]:
        if column.name in shown:
            return column.tasks[: shown[column.name]]
        return window.cut(column.tasks)

    return board.to_json(cut)


def more_cards(
    column: Mapping[str, Any], group_by: str, shown: Mapping[str, int], links: Links
) -> str:
    """The links under a column cut short (nothing under a whole one)."""
    left = column["count"] - len(column["tasks"])
    if left <= 0:
        return ""
    wider = {**shown, column["name"]: len(column["tasks"]) + MORE_CARDS}
    query = [("group_by", group_by), *((("show", f"{n}:{c}") for n, c in wider.items()))]
    more = (
        f'<a href="{h(links.page("board"))}?{h(urlencode(query))}" data-more>'
        f"Show {min(left, MORE_CARDS)} more</a>"
    )
    table = _TABLE_FILTERS.get(group_by)
    if table is not None and column["value"] is not None:
        target = links.page("tasks") + "?" + urlencode({table: column["value"]})
        more += f' · <a href="{h(target)}">all {column["count"]:,} in the table</a>'
    return f'<p class="more muted">{left:,} more: {more}</p>'
