"""YAML loading with errors that name the file, line and column.

Three readers, each for one job:

- :func:`load_text` parses with PyYAML's C ``CBaseLoader``: every scalar stays
  a string (``id: 010`` is ``"010"``), and it is the fastest reader there is.
  Use it on hot read paths and convert the few typed fields yourself.
- :func:`load_safe` parses YAML 1.2 into plain Python values (ruamel ``safe``).
- :func:`load_roundtrip` keeps comments, key order and quoting so that
  :func:`dump_roundtrip` writes back what a person wrote, edits aside.

Library exceptions never escape: a syntax error becomes a :class:`YamlError`
whose ``details`` hold ``file``, ``line`` and ``column`` (1-based).
"""

from __future__ import annotations

import functools
import io
from typing import TYPE_CHECKING, Any

from mtcommon.errors import CodedError

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.representer import RoundTripRepresenter


class YamlError(CodedError):
    """A YAML document that cannot be read (``yaml.syntax``, ``yaml.duplicate_key``)."""

    code = "yaml.syntax"


def _located(exc: Exception, source: str, code: str = "yaml.syntax") -> YamlError:
    """Translate a ruamel or PyYAML ``MarkedYAMLError`` into a located ``YamlError``."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    problem = " ".join(str(problem).split())
    if mark is None:
        return YamlError(f"{source}: {problem}", code=code, details={"file": source})
    line, column = mark.line + 1, mark.column + 1
    return YamlError(
        f"{source}:{line}:{column}: {problem}",
        code=code,
        details={"file": source, "line": line, "column": column},
    )


def load_text(text: str, *, source: str = "<string>") -> Any:
    """Parse one document keeping every scalar as text (PyYAML C loader, fast)."""
    import yaml

    loader_class = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
    try:
        return yaml.load(text, Loader=loader_class)
    except yaml.YAMLError as exc:
        raise _located(exc, source) from None


#: Line breaks besides ``\n`` and ``\r`` (NEL, LINE and PARAGRAPH SEPARATOR). ruamel's
#: emitter writes them raw in plain and single-quoted scalars, where a reader folds them
#: into a space (``'a\x85b'`` came back as ``'a b'``); double quotes escape them.
_UNICODE_BREAKS = frozenset("\x85\u2028\u2029")


@functools.cache
def _representer() -> type[RoundTripRepresenter]:
    from ruamel.yaml.representer import RoundTripRepresenter

    class Representer(RoundTripRepresenter):
        def represent_str(self, data: str) -> ScalarNode:
            style = None if _UNICODE_BREAKS.isdisjoint(data) else '"'
            node: ScalarNode = self.represent_scalar("tag:yaml.org,2002:str", data, style=style)
            return node

    Representer.add_representer(str, Representer.represent_str)
    return Representer


def _ruamel(typ: str, allow_duplicate_keys: bool) -> YAML:
    from ruamel.yaml import YAML

    yaml = YAML(typ=typ, pure=typ == "rt")
    yaml.allow_duplicate_keys = allow_duplicate_keys
    if typ == "rt":
        yaml.Representer = _representer()
        yaml.preserve_quotes = True
        yaml.width = 4096
        yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def _load(text: str, source: str, typ: str, allow_duplicate_keys: bool) -> Any:
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return _ruamel(typ, allow_duplicate_keys).load(text)
    except DuplicateKeyError as exc:
        raise _located(exc, source, code="yaml.duplicate_key") from None
    except MarkedYAMLError as exc:
        raise _located(exc, source) from None
    except YAMLError as exc:
        raise YamlError(f"{source}: {exc}", details={"file": source}) from None


def load_safe(text: str, *, source: str = "<string>", allow_duplicate_keys: bool = False) -> Any:
    """Parse one YAML 1.2 document into plain dicts, lists and scalars."""
    return _load(text, source, "safe", allow_duplicate_keys)


def load_roundtrip(
    text: str, *, source: str = "<string>", allow_duplicate_keys: bool = False
) -> Any:
    """Parse one document keeping comments, key order and quoting for a later dump."""
    return _load(text, source, "rt", allow_duplicate_keys)


def dump_roundtrip(data: Any) -> str:
    """Serialise data loaded by :func:`load_roundtrip` (or plain values) back to text."""
    stream = io.StringIO()
    _ruamel("rt", False).dump(data, stream)
    return stream.getvalue()


def key_lines(mapping: Any) -> dict[str, int]:
    """The 1-based line of each key of a mapping read by :func:`load_roundtrip`.

    Other values (plain dicts from :func:`load_safe`, scalars) give ``{}``.
    """
    lc = getattr(mapping, "lc", None)
    if lc is None or not isinstance(mapping, dict):
        return {}
    return {str(key): int(lc.key(key)[0]) + 1 for key in mapping}


def find_duplicate_keys(text: str, *, source: str = "<string>") -> list[str]:
    """Dotted paths of mapping keys that appear more than once, in document order.

    ``id: {a: 1}\\nid: {a: 2}`` gives ``["id"]``; a repeated nested key gives
    ``["parent.child"]``. Sequence items contribute their index to the path.
    """
    from ruamel.yaml.error import MarkedYAMLError
    from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

    try:
        root = _ruamel("rt", True).compose(text)
    except MarkedYAMLError as exc:
        raise _located(exc, source) from None

    found: list[str] = []

    def walk(node: Node | None, path: str) -> None:
        if isinstance(node, MappingNode):
            seen: set[str] = set()
            for key_node, value_node in node.value:
                key = str(key_node.value) if isinstance(key_node, ScalarNode) else "?"
                child = f"{path}.{key}" if path else key
                if key in seen and child not in found:
                    found.append(child)
                seen.add(key)
                walk(value_node, child)
        elif isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, f"{path}.{index}" if path else str(index))

    walk(root, "")
    return found
