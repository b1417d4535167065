"""BLAKE2b for the names and keys of what tasktool keeps between runs, without OpenSSL.

``import hashlib`` loads OpenSSL's libcrypto: every command that names a memo file by a
digest would pay it at start. CPython's own BLAKE2 (``_blake2``, which ``hashlib.blake2b``
is) loads in a fraction of that (docs/benchmarks.md, "Figures behind tasktool's code"); a
Python built without it falls back to ``hashlib``.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # a Python built without its own BLAKE2
    from hashlib import blake2b

__all__ = ["blake2b"]
