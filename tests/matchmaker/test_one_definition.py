"""Small shared definitions of the matchmaker exist once, not as copies per module."""

from __future__ import annotations

from pathlib import Path

import matchmaker

SOURCE = Path(matchmaker.__file__).parent


def _holding(text: str) -> list[str]:
    return sorted(
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if text in path.read_text(encoding="utf-8")
    )


def test_one_internal_error_factory() -> None:
    assert _holding('"internal error"') == ["errors.py"]


def test_one_asgi_send_alias() -> None:
    assert _holding("Callable[[MutableMapping[str, Any]], Awaitable[None]]") == ["asgi.py"]
