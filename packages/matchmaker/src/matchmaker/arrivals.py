"""The arrivals file of ``matchmaker simulate``: one JSON object per line, in time order.

The server writes it (``--record-arrivals``, :mod:`matchmaker.data.recording`)
and the simulator reads it, checked whole before anything runs.

Each line is ``{"at_ms", "attributes", "latencies"?, "leave_ms"?, "pool"?}``:
when the entry arrives, the attributes its client declared (only those a
policy's rules read matter), its measured latency to each region (what a
policy's ``regions`` read), when it leaves if still waiting, and,
in a recorded file, the policy it entered. A line that is not such an
object, or arrives before the line above it, stops the run with its line
number: a trace half replayed would give numbers that look right and are not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import msgspec

from matchmaker.errors import MatchmakerError
from matchmaker.model import FilterValue, Name

__all__ = ["Arrival", "Trace", "bad_arrival", "encode_arrival", "parse_arrivals"]

Millis = Annotated[int, msgspec.Meta(ge=0)]
Latency = Annotated[int, msgspec.Meta(ge=0)] | Annotated[float, msgspec.Meta(ge=0)]


class Arrival(msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=True):
    """One entry of a trace (one client entering the policy's pool once)."""

    at_ms: Millis
    attributes: dict[str, FilterValue]
    latencies: dict[str, Latency] | None = None
    leave_ms: Millis | None = None
    pool: Name | None = None


@dataclass(frozen=True, slots=True)
class Trace:
    """The arrivals of a file in time order, with the line each came from."""

    arrivals: list[Arrival]
    lines: list[int]


_DECODER = msgspec.json.Decoder(Arrival)
_ENCODER = msgspec.json.Encoder()


def encode_arrival(arrival: Arrival) -> bytes:
    """One line of an arrivals file (no newline), as :func:`parse_arrivals` reads it."""
    return _ENCODER.encode(arrival)


def parse_arrivals(data: bytes, *, pool: str | None = None) -> Trace:
    """Every arrival of ``data`` (blank lines skipped), or ``simulate.bad_arrival`` /
    ``simulate.out_of_order`` naming the first bad line. ``pool``: keep only the lines
    recorded under that policy (all of them are checked)."""
    arrivals: list[Arrival] = []
    lines: list[int] = []
    last = 0
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            arrival = _DECODER.decode(line)
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            raise bad_arrival(number, str(exc)) from None
        if arrival.leave_ms is not None and arrival.leave_ms < arrival.at_ms:
            raise bad_arrival(number, "leave_ms is before at_ms")
        if arrival.at_ms < last:
            raise MatchmakerError(
                f"arrivals line {number}: at_ms {arrival.at_ms} is before the line above "
                f"({last}); the file must be in time order",
                code="simulate.out_of_order",
                details={"line": number},
            )
        last = arrival.at_ms
        if pool is None or arrival.pool == pool:
            arrivals.append(arrival)
            lines.append(number)
    return Trace(arrivals, lines)


def bad_arrival(number: int, problem: str) -> MatchmakerError:
    """``simulate.bad_arrival`` for line ``number``."""
    return MatchmakerError(
        f"arrivals line {number}: {problem}",
        code="simulate.bad_arrival",
        details={"line": number},
    )
