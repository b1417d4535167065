"""The dependency graph drawn as SVG on the server: layers left to right, no script.

A task's layer is the length of the longest chain of its dependencies in the
view (edges of a cycle are skipped), so every arrow points right. Within a
layer tasks follow the mean position of their dependencies (one barycentre
pass), which removes most crossings of typical task graphs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasktool.model.task import natural_key
from tasktool.web.layout import Links, h

__all__ = ["GAP_X", "GAP_Y", "NODE_H", "NODE_W", "PAD", "TITLE_CHARS", "graph_svg"]

NODE_W, NODE_H = 200.0, 46.0
GAP_X, GAP_Y = 70.0, 14.0
PAD = 16.0
TITLE_CHARS = 26


def _layers(nodes: list[str], deps: Mapping[str, list[str]]) -> dict[str, int]:
    """Longest dependency chain below each node; iterative (chains may be thousands long)."""
    layer: dict[str, int] = {}
    entered: set[str] = set()
    for root in nodes:
        if root in entered:
            continue
        entered.add(root)
        stack = [(root, iter(deps.get(root, ())))]
        while stack:
            node, pending = stack[-1]
            for dep in pending:
                if dep not in entered:
                    entered.add(dep)
                    stack.append((dep, iter(deps.get(dep, ()))))
                    break
            else:
                stack.pop()
                # A dependency still on the stack closes a cycle: its edge does not count.
                below = [layer[dep] + 1 for dep in deps.get(node, ()) if dep in layer]
                layer[node] = max(below, default=0)
    return layer


def _short(text: str) -> str:
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def graph_svg(graph: Mapping[str, Any], links: Links) -> str:
    """The ``/api/graph`` document as an inline SVG with a link per task."""
    nodes = {node["id"]: node for node in graph["nodes"]}
    deps: dict[str, list[str]] = {node: [] for node in nodes}
    for edge in graph["edges"]:
        deps[edge["to"]].append(edge["from"])
    layer = _layers(sorted(nodes, key=natural_key), deps)
    columns: dict[int, list[str]] = {}
    for node in sorted(nodes, key=natural_key):
        columns.setdefault(layer[node], []).append(node)
    row: dict[str, float] = {}
    for index in sorted(columns):
        members = columns[index]
        if index:
            members.sort(
                key=lambda n: (
                    sum(row[d] for d in deps[n] if d in row)
                    / max(1, sum(d in row for d in deps[n])),
                    natural_key(n),
                )
            )
        for position, node in enumerate(members):
            row[node] = position
    where = {
        node: (PAD + column * (NODE_W + GAP_X), PAD + int(row[node]) * (NODE_H + GAP_Y))
        for column, members in columns.items()
        for node in members
    }
    width = PAD * 2 + len(columns) * (NODE_W + GAP_X) - GAP_X
    height = PAD * 2 + max(len(m) for m in columns.values()) * (NODE_H + GAP_Y) - GAP_Y
    edges = []
    for edge in graph["edges"]:
        (x1, y1), (x2, y2) = where[edge["from"]], where[edge["to"]]
        start_x, start_y = x1 + NODE_W, y1 + NODE_H / 2
        end_x, end_y = x2, y2 + NODE_H / 2
        if end_x <= start_x:  # a cycle's back edge: loop around below
            end_x, end_y = x2 + NODE_W / 2, y2 + NODE_H
            path = (
                f"M{start_x},{start_y} C{start_x + 40},{start_y + 80} "
                f"{end_x},{end_y + 60} {end_x},{end_y}"
            )
        else:
            bend = (end_x - start_x) / 2
            path = (
                f"M{start_x},{start_y} C{start_x + bend},{start_y} "
                f"{end_x - bend},{end_y} {end_x},{end_y}"
            )
        edges.append(f'<path class="edge" d="{path}" marker-end="url(#arrow)"/>')
    boxes = []
    for node_id, (x, y) in where.items():
        node = nodes[node_id]
        classes = f"node status-{h(node['status'])}" + (" actionable" if node["actionable"] else "")
        boxes.append(
            f'<a href="{h(links.task(node_id))}" class="{classes}">'
            f"<title>{h(node_id)}: {h(node['title'])} [{h(node['status'])}]</title>"
            f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="6"/>'
            f'<text x="{x + 10}" y="{y + 19}" class="node-id">'
            f"{h(node_id)} · {h(node['status'])}</text>"
            f'<text x="{x + 10}" y="{y + 36}">{h(_short(node["title"]))}</text></a>'
        )
    return (
        f'<svg class="graph" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="Dependency graph of {len(nodes)} tasks">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/>'
        "</marker></defs>" + "".join(edges) + "".join(boxes) + "</svg>"
    )
