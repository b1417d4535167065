"""``session.backfill`` under ``--cluster``: refused with a coded error, not half served."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cluster_client import Client, cluster

pytestmark = pytest.mark.redis


def test_backfill_is_backfill_unavailable_across_processes(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as (a, b):
        left, right = Client(a), Client(b)
        assert left.enter("trio", group_size=3)["ok"]
        assert right.enter("trio", group_size=3)["ok"]
        reply = left.request("session.backfill", {"session_id": "s-anything", "seats": 1})
        assert reply["ok"] is False
        assert reply["error"]["code"] == "backfill.unavailable"
        left.close()
        right.close()
