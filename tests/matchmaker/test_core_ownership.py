"""Only :mod:`matchmaker.core` changes the core's state.

The core's records (clients, entries, pools, sessions), the engine's tables and
a conversation's fields are written by the core's own operations; the shells
(the data plane, the cluster) call those operations and read the results. An
assignment from outside (``plane.core.clients[id] = ...``,
``conversation.client = None``) would bypass the rules the core keeps, so this
test reads every module outside the core and fails on an assignment, augmented
assignment or ``del`` whose target is an attribute named like a field of a core
object, on anything but the assigning object itself (``self.clients`` of the data
plane is its own table of connections).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import matchmaker
from matchmaker.config import Limits
from matchmaker.core import ClientState, Matchmaker, Member, Pool, PoolEntry, Session
from matchmaker.core.conversation import Conversation
from matchmaker.core.resume import Resumption

SOURCE = Path(matchmaker.__file__).parent


def core_fields() -> frozenset[str]:
    """The attribute names of the core's objects."""
    names: set[str] = set()
    for record in (ClientState, PoolEntry, Member, Pool, Session):
        names.update(field.name for field in dataclasses.fields(record))
    names.update(name for name in Conversation.__slots__ if not name.startswith("_"))
    core = Matchmaker(Limits())
    # Its tables and collaborators, not the operations it binds from them (``core.relay``).
    names.update(
        name
        for name, value in vars(core).items()
        if not name.startswith("_") and not callable(value)
    )
    names.update(name for name in vars(core.resumption) if not name.startswith("_"))
    assert isinstance(core.resumption, Resumption)
    return frozenset(names)


def _targets(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.Assign | ast.Delete):
        yield from node.targets
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        yield node.target


def _written(target: ast.expr) -> Iterator[ast.Attribute]:
    """The attributes an assignment target writes (``a.b = ``, ``a.b[k] = ``, unpacking)."""
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _written(element)
    elif isinstance(target, ast.Starred):
        yield from _written(target.value)
    else:
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Attribute):
            yield target


def _own(attribute: ast.Attribute) -> bool:
    return isinstance(attribute.value, ast.Name) and attribute.value.id in {"self", "cls"}


def writes_outside_the_core(root: Path, fields: frozenset[str]) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(node):
                for attribute in _written(target):
                    if attribute.attr in fields and not _own(attribute):
                        found.append(f"{relative}:{attribute.lineno}: {ast.unparse(attribute)}")
    return found


def test_nothing_outside_the_core_assigns_the_cores_state() -> None:
    assert writes_outside_the_core(SOURCE, core_fields()) == []


def test_the_check_sees_the_assignments_it_forbids(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "engine.py").write_text("client.entries['p'] = entry\n")
    (tmp_path / "shell.py").write_text(
        "plane.core.clients[client_id] = state\n"
        "old.conversation.client = None\n"
        "conversation.core = other\n"
        "del core.sessions[key]\n"
        "entry.paused, other = True, 1\n"
        "self.clients[client_id] = connection\n"
        "relay.answered = True\n"
    )
    assert writes_outside_the_core(tmp_path, core_fields()) == [
        "shell.py:1: plane.core.clients",
        "shell.py:2: old.conversation.client",
        "shell.py:3: conversation.core",
        "shell.py:4: core.sessions",
        "shell.py:5: entry.paused",
    ]
