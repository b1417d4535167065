"""The JSON document's figures as rows, one cell per policy: ``--format table`` prints them
with rich, the HTML report heads its page with them."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["figure_rows", "print_table"]


def figure_rows(document: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """``(label, one cell per policy)``: counts, wait percentiles, each spread's."""
    policies: list[dict[str, Any]] = document["policies"]
    rows = [(key, [str(p[key]) for p in policies]) for key in _COUNTS]
    for rank in ("p50", "p90", "p99", "max"):
        rows.append((f"wait {rank} (ms)", [_shown(p["wait_ms"][rank]) for p in policies]))
    for attribute in sorted({a for p in policies for a in p["spread"]}):
        for rank in ("p50", "p90", "max"):
            cells = [_shown(p["spread"].get(attribute, {}).get(rank)) for p in policies]
            rows.append((f"{attribute} spread {rank}", cells))
    return rows


def print_table(document: dict[str, Any]) -> None:
    """The figures side by side on standard output."""
    table = Table("", *(p["name"] for p in document["policies"]))
    for label, cells in figure_rows(document):
        table.add_row(label, *cells)
    Console(soft_wrap=True).print(table)


_COUNTS = ("entries", "matched", "unmatched", "sessions")


def _shown(value: Any) -> str:
    """A figure as text: ``-`` where there is none (nothing matched, no such rule)."""
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else str(value)
