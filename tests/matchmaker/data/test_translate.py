"""The relayed message's shortcut in ``event_head`` writes the frame the protocol's
Structs encode, whatever the ids and the data hold, and its kept prefixes stay bounded."""

from __future__ import annotations

import pytest
from msgspec import Raw

from matchmaker.core.events import MessageRelayed
from matchmaker.data import translate
from matchmaker.data.protocol.replies import encode


@pytest.mark.parametrize(
    ("session_id", "sender", "data"),
    [
        ("s1", "c1", b"12345.678"),
        ('s"\\quoted', "cli\u00e9nt", b'{"a":"\\u00e9x","b":[1,2,{}]}'),
        ("s\u2603", "c", '"caf\u00e9 \u2603"'.encode()),
        ("s", "c\n", b"null"),
    ],
)
def test_a_relayed_message_is_framed_as_the_protocol_encodes_it(
    session_id: str, sender: str, data: bytes
) -> None:
    event = MessageRelayed(session_id, sender, Raw(data))
    expected = encode(translate._wire_event(event))[:-1].decode()
    assert translate.event_head(event) == expected
    assert translate.event_head(event) == expected  # the kept prefix gives the same frame


def test_the_kept_prefixes_are_bounded() -> None:
    kept = translate._message_prefix.cache_info().maxsize
    assert kept is not None
    for i in range(kept + 10):
        assert translate.event_head(MessageRelayed(f"s{i}", "c", Raw(b"1"))).startswith("{")
    assert translate._message_prefix.cache_info().currsize <= kept
