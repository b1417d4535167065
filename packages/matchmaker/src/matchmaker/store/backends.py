"""``open_store(url)``: pick and open a backend from its URL."""

from __future__ import annotations

from pathlib import Path

from matchmaker.errors import MatchmakerError
from matchmaker.store.base import ProjectStore
from matchmaker.store.sealing import StoreKey
from matchmaker.store.url import redact_url

__all__ = ["DEFAULT_STORE_URL", "open_store"]

DEFAULT_STORE_URL = "sqlite:///matchmaker.db"


async def open_store(
    url: str, key: StoreKey | None = None, *, verify_key: bool = True
) -> ProjectStore:
    """Open the store named by ``url``, its secrets sealed under ``key`` when given.

    ``memory://``, ``sqlite:///relative/file.db`` or ``sqlite:////absolute/file.db``,
    ``postgresql://user@host:port/database`` (also ``postgres://``; needs the
    ``matchmaker[postgres]`` extra; extra query parameters are PostgreSQL
    settings such as ``search_path``). A store whose secrets were written
    under another key (or in clear, when ``key`` is given) is refused with
    ``store.key_mismatch`` and nothing in it is changed; ``memory://`` keeps
    nothing at rest and ignores ``key``. ``verify_key=False`` skips that check:
    only :meth:`ProjectStore.rekey` may then be relied on.
    """
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme == "memory":
        from matchmaker.store.memory import MemoryStore

        return MemoryStore()
    if scheme == "sqlite":
        from matchmaker.store.sqlite import SqliteStore

        path = url[len("sqlite:///") :] if url.lower().startswith("sqlite:///") else ""
        if not path:
            raise _bad_url(url, "expected sqlite:///path/to/file.db")
        return await SqliteStore.open(Path(path), key, verify_key=verify_key)
    if scheme in ("postgresql", "postgres"):
        from matchmaker.store.postgres import PostgresStore

        return await PostgresStore.open(url, key, verify_key=verify_key)
    raise _bad_url(url, "expected memory://, sqlite:///path or postgresql://")


def _bad_url(url: str, hint: str) -> MatchmakerError:
    return MatchmakerError(
        f"unsupported store URL {redact_url(url)!r}: {hint}", code="store.bad_url"
    )
