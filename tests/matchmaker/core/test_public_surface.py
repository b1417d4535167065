"""``matchmaker.core`` exports what a new transport needs (``docs/architecture.md``)."""

from __future__ import annotations

from typing import get_args

import matchmaker.core
from matchmaker.core import effects


def test_a_transport_needs_nothing_but_the_package() -> None:
    for name in ("Conversation", "Matchmaker", "ClientCommand", "Delivery", "Event", "Effect"):
        assert name in matchmaker.core.__all__
    for effect in get_args(effects.Effect):
        if isinstance(effect, type):  # every effect but Delivery, a tuple alias
            assert getattr(matchmaker.core, effect.__name__) is effect
            assert effect.__name__ in matchmaker.core.__all__


def test_every_exported_name_exists() -> None:
    for name in matchmaker.core.__all__:
        assert getattr(matchmaker.core, name) is not None
