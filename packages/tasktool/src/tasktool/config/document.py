"""Reading the config file: typed YAML values plus the keys written more than once.

The file is parsed with PyYAML's C parser and its YAML 1.1 resolver, which is
fast and already imported by the task reader (ruamel is slow to import).
Scalars are converted here, by tag, so that ``effort: [small, 1]`` can be told
apart from ``effort: [small, "1"]``; dates stay text (``due: 2024-05-01``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from tasktool.files.caches import signature
from tasktool.files.caches.memo import Memo
from tasktool.files.storage import STATE_DIR, read_regular
from tasktool.model.errors import TaskToolError

__all__ = ["MAX_BYTES", "MAX_VALUES", "ConfigDocument", "parse_config", "read_config"]


class ConfigDocument(msgspec.Struct, frozen=True, kw_only=True):
    """The parsed file: its top-level mapping and the dotted keys that repeat."""

    data: dict[str, Any]
    duplicates: tuple[str, ...] = ()


def _scalar(tag: str, value: str) -> Any:
    kind = tag.rsplit(":", 1)[-1]
    if kind == "null":
        return None
    if kind == "bool":
        return value.lower() in {"true", "yes", "on"}
    if kind == "int":
        digits = value.replace("_", "")
        for base in (10, 0):
            try:
                number = int(digits, base)
            except ValueError:
                continue
            # Beyond 64 bits it stays text: no option takes it, and the cache cannot hold it.
            return number if -(2**63) <= number < 2**64 else value
        return value
    if kind == "float":
        try:
            return float(value.replace("_", ""))
        except ValueError:
            return value
    return value


#: Larger than any config file.
MAX_BYTES = 1 << 20
#: More values than any config holds: past it, aliases are multiplying a small file.
MAX_VALUES = 100_000


class _Walk:
    """Node-to-value conversion state: repeated keys seen, and the values still allowed."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.duplicates: list[str] = []
        self.budget = MAX_VALUES

    def spend(self) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise TaskToolError(
                f"{self.source}: the config expands to more than {MAX_VALUES} values "
                "(aliases repeating aliases?)",
                code="config.too_large",
                details={"file": self.source},
            )


def _convert(node: Any, path: str, walk: _Walk) -> Any:
    import yaml

    walk.spend()
    duplicates = walk.duplicates
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
            child = f"{path}.{key}" if path else key
            if key in result and child not in duplicates:
                duplicates.append(child)
            result[key] = _convert(value_node, child, walk)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, f"{path}.{i}", walk) for i, item in enumerate(node.value)]
    return _scalar(node.tag, node.value)


def parse_config(text: str, *, source: str) -> ConfigDocument:
    """Parse a config file's text; a syntax error names the file, line and column."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(str(exc.problem or exc.context or exc).split())
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise TaskToolError(
            f"{where}: {problem}", code="config.syntax", details={"file": source}
        ) from None
    except yaml.YAMLError as exc:
        raise TaskToolError(f"{source}: {exc}", code="config.syntax") from None
    walk = _Walk(source)
    data = _convert(root, "", walk) if root is not None else {}
    if not isinstance(data, dict):
        raise TaskToolError(
            f"{source}: the config file must be a mapping of keys to values",
            code="config.not_mapping",
            details={"file": source},
        )
    return ConfigDocument(data=data, duplicates=tuple(walk.duplicates))


#: The config cache's format: change it with what ConfigDocument holds.
_CACHE_FORMAT = "config-cache-2"  # 2: a files.memo.Memo keyed by the file's signature
_document_decoder = msgspec.msgpack.Decoder(ConfigDocument)


def _read_regular(path: Path) -> tuple[os.stat_result, str]:
    """The file's stat and text; a FIFO or device (``--config /dev/zero``) would block or
    never end, and a file past :data:`MAX_BYTES` is no config, so both are refused."""
    stat, raw = read_regular(path, MAX_BYTES)
    return stat, raw.decode("utf-8")


def _task_dir_exists(path: Path, data: dict[str, Any]) -> bool:
    """Whether the task directory the file names exists (the environment and the flags
    aside: this only decides whether to keep a cache)."""
    named = data.get("task-dir", data.get("dir"))
    return (path.parent / named).is_dir() if isinstance(named, str) else True


def read_config(path: Path, *, cache: bool = True) -> ConfigDocument:
    """Read and parse a config file through a cache beside it.

    The cache (``.tasktool/cache/config-<name>.msgpack`` next to the file, a memo keyed
    by the file's signature: :mod:`tasktool.files.caches.memo`) saves importing PyYAML on warm
    runs; an unwritable directory just means no cache. ``cache=False`` for the home
    file: no state folder is ever made in the home folder; nor beside a file whose task
    directory does not exist yet (a fresh clone: a run there leaves nothing behind).
    """
    try:
        stat, text = _read_regular(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskToolError(
            f"cannot read config file {path}: {getattr(exc, 'strerror', None) or exc}",
            code="config.unreadable",
            details={"file": str(path)},
        ) from None
    if not cache:
        return parse_config(text, source=str(path))
    memo = Memo(path.parent / STATE_DIR / "cache" / f"config-{path.name}.msgpack", _CACHE_FORMAT)
    key = signature.of(stat)
    cached: ConfigDocument | None = memo.recall(key, _document_decoder)
    if cached is not None:
        return cached
    document = parse_config(text, source=str(path))
    if _task_dir_exists(path, document.data):
        memo.remember(key, document)
    return document
