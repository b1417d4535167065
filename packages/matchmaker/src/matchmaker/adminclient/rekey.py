"""``matchmaker admin rotate-store-key``: re-seal a store's client secrets under a new key.

It works on the store itself (``--store``), not through a server: the keys
never travel over the network. Stop every server of the store first, rotate,
then start them with ``--store-key-file`` naming the new key (a server still
running with the old key would write under it: rotate again with both keys).
"""

from __future__ import annotations

from collections.abc import Sequence

from matchmaker.store import StoreKey, open_store

__all__ = ["rotate"]


async def rotate(
    store_url: str, old_key_files: Sequence[str], new_key_file: str
) -> tuple[int, str]:
    """Re-seal every secret of the store under the new key: (Projects re-sealed, new key id).

    Rows in clear are always accepted (sealing them needs no old key); a row
    under a key not given fails the whole rotation and nothing is written.
    """
    old_keys = [StoreKey.from_file(path) for path in old_key_files]
    new_key = StoreKey.from_file(new_key_file)
    async with await open_store(store_url, new_key, verify_key=False) as store:
        count = await store.rekey([None, *old_keys], new_key)
    return count, new_key.key_id
