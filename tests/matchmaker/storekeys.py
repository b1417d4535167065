"""Store key files for tests, made as an operator is told to make them (owner-only, 0600),
since the server refuses one its group or others may read."""

from __future__ import annotations

import base64
import os
from pathlib import Path


def new_key_file(path: Path, mode: int = 0o600) -> Path:
    """A fresh store key (32 random bytes in base64, a newline after) at ``path``."""
    path.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    path.chmod(mode)
    return path
