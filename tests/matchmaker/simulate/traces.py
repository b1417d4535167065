"""Arrivals and policy files for the simulator's tests, and the command run in-process."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from matchmaker.cli import main


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_policy(path: Path, policy: dict[str, Any]) -> Path:
    path.write_text(json.dumps(policy), encoding="utf-8")
    return path


def ranked(within: int, widen: dict[str, int] | None = None, **fields: Any) -> dict[str, Any]:
    """An auto policy of pairs by ``rating`` within ``within`` (widening as given)."""
    rule: dict[str, Any] = {"within": within}
    if widen is not None:
        rule["widen"] = widen
    return {"name": "ranked", "mode": "auto", "groupSize": 2, "filter": {"rating": rule}, **fields}


def generated(count: int, *, seed: int = 7, every_ms: int = 50) -> list[dict[str, Any]]:
    """``count`` arrivals ``every_ms`` apart, ratings normal around 1500 (sd 300)."""
    rng = random.Random(seed)
    return [
        {"at_ms": i * every_ms, "attributes": {"rating": round(rng.gauss(1500, 300))}}
        for i in range(count)
    ]


def simulate(*args: str | Path) -> Result:
    """``matchmaker simulate ARGS`` in-process."""
    return CliRunner().invoke(main, ["simulate", *map(str, args)], catch_exceptions=False)
