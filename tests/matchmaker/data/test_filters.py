"""Ad-hoc filters obey the rules policy filters obey (one function, both planes)."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.errors import MatchmakerError


@pytest.mark.parametrize(
    ("mode", "filter", "details"),
    [
        ("auto", {"band": "x" * 257}, {"field": "filter", "attribute": "band", "limit": 256}),
        ("auto", {"band": -(2**53)}, {"field": "filter", "attribute": "band", "limit": 2**53 - 1}),
        ("auto", {f"k{i}": 1 for i in range(33)}, {"field": "filter", "limit": 32}),
        ("claim", {"band": "@self"}, {"field": "filter"}),
    ],
)
async def test_unmatchable_ad_hoc_filters_are_refused(
    start_server: Any, mode: str, filter: dict[str, Any], details: dict[str, Any]
) -> None:
    server = await start_server()
    client = await server.connect()
    with pytest.raises(MatchmakerError) as caught:
        await client.enter(pool="p", create=True, mode=mode, group_size=2, filter=filter)
    assert caught.value.code == "protocol.bad_request"
    assert caught.value.details == details
    assert server.plane.core.pools == {}


async def test_a_filter_at_the_limits_is_accepted(start_server: Any) -> None:
    server = await start_server(max_attributes=2, max_attribute_value_chars=3)
    client = await server.connect(attributes={"a": "abc", "b": 1})
    filter = {"a": "abc", "b": "@self"}
    entered = await client.enter(pool="p", create=True, mode="auto", group_size=2, filter=filter)
    assert entered["pool"] == "p"
