"""RFC 6455 rules both data-plane servers enforce alike, where picows and hypercorn differ.

picows and hypercorn (through wsproto) each parse frames themselves, and each left a gap
the other did not: picows upgraded ``Sec-WebSocket-Version: 8`` and echoed close codes
no endpoint may send, hypercorn answered an unknown version a bare 400. What a client
sees must not depend on the server an operator picked, so the rules live here, once:

- An upgrade naming another version than 13 is answered 426 with
  ``Sec-WebSocket-Version: 13`` (RFC 6455, section 4.2.2), never 101.
- A close code that may not be sent on the wire (section 7.4: 1005, 1006 and 1015 are
  local only, 1004 and the rest of 1000-2999 unassigned, anything under 1000 or over
  4999 invalid) is answered 1002, as wsproto does; its set of assigned codes is taken
  as is (it does not know 1014), so both servers agree code by code.
- Every frame of a fragmented message costs :data:`FRAME_CHARGE` bytes on top of its
  payload toward the hard cap: a message split into empty frames passes the cap after
  a bounded number of them and closes 1009, where it was free before (millions of
  six-byte frames held a list entry each under picows, and cost wsproto's parser CPU
  under hypercorn without end).
- A client that sends more than :data:`AFTER_CLOSE_FRAMES` frames after our close
  frame is not closing: what it sends is no longer read, and the connection ends at
  :data:`CLOSE_TIMEOUT_S`. Before, every frame was parsed on the one thread until
  the client stopped: 2,000,000 empty frames after a 1009 held another client's ping
  2.5-5.7 s under hypercorn.
"""

from __future__ import annotations

import msgspec

from matchmaker.errors import MatchmakerError
from mtcommon import render_json

__all__ = [
    "AFTER_CLOSE_FRAMES",
    "CLOSE_TIMEOUT_S",
    "FRAME_CHARGE",
    "VERSION",
    "close_code_refused",
    "version_refusal",
]

# What each frame of a fragmented message counts toward the hard cap besides its payload:
# at the default cap (256 KiB) a message spans at most 1024 frames.
FRAME_CHARGE = 256
# Frames a client may still send after our close frame (frames in flight, its own close)
# before what it sends is no longer read; the close timeout then ends the connection.
AFTER_CLOSE_FRAMES = 64
# How long a client has to answer our close frame before its connection is dropped.
CLOSE_TIMEOUT_S = 5.0
# The one protocol version spoken (RFC 6455, section 4.1).
VERSION = "13"

# Codes a peer may send (RFC 6455 section 7.4.1 and wsproto's list of registered ones).
_ASSIGNED = frozenset((1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013))
_APPLICATION = range(3000, 5000)


def close_code_refused(code: int) -> bool:
    """Whether a client's close frame with ``code`` breaks the protocol (answered 1002)."""
    return code not in _ASSIGNED and code not in _APPLICATION


def version_refusal(version: str | None) -> tuple[int, dict[str, str], bytes] | None:
    """The 426 for an upgrade that names ``version`` (not 13), ``None`` to go on.

    A request without the header is malformed, not of another version: the servers'
    own 400 answers it.
    """
    if version is None or version.strip() == VERSION:
        return None
    error = MatchmakerError(
        f"Sec-WebSocket-Version must be {VERSION}, not {version[:16]!r}", code="request.invalid"
    )
    body = msgspec.json.encode(render_json(error))
    headers = {"Sec-WebSocket-Version": VERSION, "Content-Type": "application/json"}
    return 426, headers, body
