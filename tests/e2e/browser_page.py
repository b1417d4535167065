"""A page in a fresh Chromium context that fails the test on any script error."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def open_page(browser: Any, timeout_ms: int) -> Iterator[Any]:
    """A 1280x800 page with ``timeout_ms`` for every wait; asserts, once closed, that no
    page it showed raised a script error."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    opened.set_default_timeout(timeout_ms)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == []  # no script error on any page
