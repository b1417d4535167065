"""An example delegate for a ``delegated`` pool: groups players of similar skill.

Run it with a Project key that has the ``delegate`` scope::

    python examples/skill_delegate.py ws://127.0.0.1:8080/ws --credential KEY --pool ranked

It attaches to the pool, mirrors it from ``pool.snapshot`` and ``pool.delta``
(a gap in the versions means a lost delta: it re-attaches for a fresh snapshot)
and, whenever a bucket holds ``--min-waiting`` players (default: two groups'
worth, so it has a choice), sends ``delegate.form`` with groups of neighbours
in skill order: sorting by skill and cutting the list into runs of
``groupSize`` minimises the skill spread of every group. (A production delegate
would also lower that threshold as players wait longer.) Players whose
``@self`` attributes differ (``--bucket region``) are never grouped together.
Groups the server answers with ``delegate.stale`` are simply dropped; the
deltas that follow say who is really still waiting.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from matchmaker.client import Client

__all__ = ["balanced_groups", "run_delegate"]


def balanced_groups(
    entries: Sequence[dict[str, Any]],
    group_size: int,
    *,
    skill: str = "skill",
    bucket: Sequence[str] = (),
    min_waiting: int = 0,
) -> list[list[str]]:
    """Entry ids in groups of ``group_size`` with the smallest skill spread.

    ``entries`` are ``pool.snapshot`` entries (``entry_id``, ``attributes``,
    ``entered_at``). Within each bucket (equal values of the ``bucket``
    attributes) holding at least ``min_waiting`` entries, entries are sorted by
    skill (the longest-waiting first among equals) and cut into consecutive
    runs; the remainder keeps waiting. An entry without a numeric skill counts
    as 0.
    """
    buckets: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for entry in entries:
        key = tuple(entry["attributes"].get(name) for name in bucket)
        buckets.setdefault(key, []).append(entry)
    groups: list[list[str]] = []
    for members in buckets.values():
        if len(members) < max(min_waiting, group_size):
            continue
        members.sort(key=lambda e: (_skill(e, skill), e["entered_at"]))
        usable = len(members) - len(members) % group_size
        for start in range(0, usable, group_size):
            groups.append([e["entry_id"] for e in members[start : start + group_size]])
    return groups


def _skill(entry: dict[str, Any], name: str) -> float:
    value = entry["attributes"].get(name)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


async def run_delegate(
    client: Client,
    pool: str,
    group_size: int,
    *,
    skill: str = "skill",
    bucket: Sequence[str] = (),
    min_waiting: int | None = None,
) -> None:
    """Attach to ``pool`` and form balanced groups until the connection closes."""
    threshold = 2 * group_size if min_waiting is None else min_waiting
    waiting: dict[str, dict[str, Any]] = {}
    version = -1
    await client.request("delegate.attach", {"pool": pool})
    async for event in client.events():
        if event.type == "pool.snapshot" and event.data["pool"] == pool:
            waiting = {e["entry_id"]: e for e in event.data["entries"]}
            version = event.data["version"]
        elif event.type == "pool.delta" and event.data["pool"] == pool:
            if event.data["version"] != version + 1:
                await client.request("delegate.attach", {"pool": pool})  # resynchronise
                continue
            version = event.data["version"]
            for entry_id in event.data["removed"]:
                waiting.pop(entry_id, None)
            for entry in event.data["added"]:
                waiting[entry["entry_id"]] = entry
        else:
            continue
        groups = balanced_groups(
            list(waiting.values()), group_size, skill=skill, bucket=bucket, min_waiting=threshold
        )
        if groups:
            await client.request("delegate.form", {"pool": pool, "groups": groups})


async def _main(args: argparse.Namespace) -> None:
    async with await Client.connect(
        args.url, project=args.project, credential=args.credential
    ) as client:
        await run_delegate(client, args.pool, args.group_size, skill=args.skill, bucket=args.bucket)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("url", help="the data plane WebSocket, e.g. ws://127.0.0.1:8080/ws")
    parser.add_argument("--credential", required=True, help="a key with the delegate scope")
    parser.add_argument("--project", default=None, help="the Project (implied by the key)")
    parser.add_argument("--pool", required=True, help="the delegated policy or pool")
    parser.add_argument("--group-size", type=int, default=2, help="the pool's groupSize")
    parser.add_argument("--skill", default="skill", help="the numeric skill attribute")
    parser.add_argument(
        "--bucket", action="append", default=[], help="an @self attribute of the pool's filter"
    )
    parser.add_argument(
        "--min-waiting", type=int, default=None, help="players a bucket needs before forming"
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
