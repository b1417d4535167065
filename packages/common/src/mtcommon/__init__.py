"""Shared error types and YAML loading for matchmaker and tasktool."""

from __future__ import annotations

from mtcommon.errors import (
    Catalogue,
    CodedError,
    ErrorCode,
    render_json,
    render_line,
    render_usage,
)
from mtcommon.yamlio import (
    YamlError,
    dump_roundtrip,
    find_duplicate_keys,
    key_lines,
    load_roundtrip,
    load_safe,
    load_text,
)

__all__ = [
    "Catalogue",
    "CodedError",
    "ErrorCode",
    "YamlError",
    "dump_roundtrip",
    "find_duplicate_keys",
    "key_lines",
    "load_roundtrip",
    "load_safe",
    "load_text",
    "render_json",
    "render_line",
    "render_usage",
]
__version__ = "0.1.0"
