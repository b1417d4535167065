"""Presenting results: fitted tables on a terminal, plain stable text otherwise, JSON, YAML.

Commands build plain data (lists and dicts of JSON types) once and hand it
here with a format name. Tables take rows (dicts) and the columns to show.
A table on a terminal is fitted to its width (:mod:`tasktool.present.terminal`).

::

    emit_data(rows, "json")                          # stable, indented JSON
    emit_table(rows, ["id", "title"], no_color=False)  # fitted or plain columns
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any, Literal, Protocol, TextIO, get_args

import msgspec

__all__ = [
    "FORMATS",
    "JSON_CHUNK",
    "Format",
    "JsonRows",
    "attribute_cells",
    "cell",
    "emit_data",
    "emit_fields",
    "emit_table",
    "emit_text",
    "for_terminal",
    "is_terminal",
    "plain_columns",
    "plain_table",
    "to_json",
    "to_yaml",
    "write_json_array",
]

Format = Literal["table", "json", "yaml"]
FORMATS: tuple[str, ...] = get_args(Format)


def _encode(data: Any) -> bytes:
    """Compact JSON; text from undecodable file names shows their bad bytes as U+FFFD."""
    try:
        return msgspec.json.encode(data)
    except UnicodeEncodeError:
        return msgspec.json.encode(_decodable(msgspec.to_builtins(data)))


def _decodable(value: Any) -> Any:
    # os.fsdecode turns bytes that are not UTF-8 into lone surrogates, which no encoder takes.
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_decodable(key): _decodable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_decodable(item) for item in value]
    return value


def to_json(data: Any) -> str:
    """Indented JSON, keys in the order the data holds them."""
    return msgspec.json.format(_encode(data), indent=2).decode("utf-8")


def to_yaml(data: Any) -> str:
    """Block-style YAML, keys in the order the data holds them."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(
        msgspec.json.decode(_encode(data)),
        Dumper=dumper,
        sort_keys=False,
        allow_unicode=True,
        width=4096,
    )


def emit_data(data: Any, fmt: str, out: TextIO | None = None) -> None:
    """Write ``data`` as JSON or YAML to ``out`` (stdout)."""
    out = out or sys.stdout
    if fmt != "json":
        out.write(to_yaml(data))
        return
    encoded = msgspec.json.format(_encode(data), indent=2) + b"\n"
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(encoded.decode("utf-8"))
        return
    out.flush()  # keep order with text already written
    buffer.write(encoded)  # megabytes of UTF-8 already: skip decoding and re-encoding


#: Items encoded per piece by :func:`write_json_array`: small enough that a large output
#: never exists as one string, large enough that the per-piece overhead stays negligible.
JSON_CHUNK = 2_000


class JsonRows(Protocol):
    """What :func:`write_json_array` writes: a sequence that encodes a slice of itself as a
    compact JSON array (faster than encoding its items one by one, or it would not
    bother); ``UnicodeEncodeError`` when some text is not UTF-8."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: slice, /) -> Sequence[Any]: ...

    def encode(self, start: int, stop: int) -> bytes: ...


def _encode_rows(items: JsonRows, start: int, stop: int) -> bytes:
    try:
        return items.encode(start, stop)
    except UnicodeEncodeError:
        return _encode(items[start:stop])


def write_json_array(items: JsonRows, write: Callable[[bytes], object]) -> None:
    """Write ``items`` to ``write`` (which takes bytes) as :func:`emit_data`'s indented JSON
    array, byte for byte, a chunk at a time (encoded by the items themselves: no dict per
    item first)."""
    if not items:
        write(b"[]\n")
        return
    write(b"[\n")
    for start in range(0, len(items), JSON_CHUNK):
        # An indented array of a chunk is "[\n" + its items + "\n]": keep the items.
        stop = min(start + JSON_CHUNK, len(items))
        piece = msgspec.json.format(_encode_rows(items, start, stop), indent=2)
        write((b",\n" if start else b"") + piece[2:-2])
    write(b"\n]\n")


def cell(value: Any) -> str:
    """A value as table text: lists comma-joined, ``None`` empty."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def plain_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Columns padded to their widest cell, two spaces apart, upper-case header, no colour.

    Built a column at a time (``board`` prints every active task, however many), then each
    line by one ``%`` of a pattern padding every column but the last (which needs none:
    the line's trailing spaces are stripped anyway), a third less work per row than
    padding each cell.
    """
    return plain_columns(columns, [_column_cells(rows, column) for column in columns])


def plain_columns(columns: Sequence[str], cells: Sequence[list[str]]) -> str:
    """:func:`plain_table`'s text from each column's cell texts (one line each): a long
    listing's cells are taken straight from its tasks (:func:`attribute_cells`)."""
    table = [[column.upper(), *texts] for column, texts in zip(columns, cells, strict=True)]
    widths = [max(map(len, texts)) for texts in table[:-1]]
    pattern = "".join(f"%-{width}s  " for width in widths) + "%s"
    return "".join([(pattern % cells).rstrip() + "\n" for cells in zip(*table, strict=True)])


def _column_cells(rows: Sequence[Mapping[str, Any]], column: str) -> list[str]:
    """One column's :func:`cell` texts on one line each."""
    return _one_line([row.get(column) for row in rows])


def attribute_cells(items: Sequence[object], name: str) -> list[str]:
    """The :func:`cell` texts of attribute ``name`` of each item, on one line each: a
    column without a dict per row."""
    return _one_line(list(map(attrgetter(name), items)))


def _one_line(values: list[Any]) -> list[str]:
    """:func:`cell` texts (strings, the common case, as is; line breaks, rare, looked for
    in the whole column at once)."""
    texts = [value if type(value) is str else cell(value) for value in values]
    if "\n" in "".join(texts):
        return [text.replace("\n", " ") for text in texts]
    return texts


def is_terminal(out: TextIO) -> bool:
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


def emit_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    *,
    title: str | None = None,
    no_color: bool = False,
    out: TextIO | None = None,
) -> None:
    """A table fitted to the terminal's width when ``out`` is a terminal (see
    :mod:`tasktool.present.terminal`), :func:`plain_table` text otherwise."""
    out = out or sys.stdout
    if not is_terminal(out):
        if title:
            out.write(f"{title}\n")
        out.write(plain_table(rows, columns))
        return
    from tasktool.present.terminal import colour_off, fitted_table, printable, terminal_width

    bold = not colour_off(no_color)
    if title:
        title = printable(title)
        out.write(f"\x1b[1m{title}\x1b[0m\n" if bold else f"{title}\n")
    out.write(fitted_table(rows, columns, width=terminal_width(), bold=bold, cell=cell))


def emit_fields(
    pairs: Sequence[tuple[str, Any]], *, no_color: bool = False, out: TextIO | None = None
) -> None:
    """``key: value`` lines (keys aligned); bold keys on a terminal."""
    out = out or sys.stdout
    width = max((len(key) for key, _ in pairs), default=0)
    bold = False
    shown: Callable[[str], str] = str
    if is_terminal(out):
        from tasktool.present.terminal import colour_off, printable

        bold = not colour_off(no_color)
        shown = printable
    for key, value in pairs:
        label = f"{key + ':':<{width + 1}}"
        if bold:
            label = f"\x1b[1m{label}\x1b[0m"
        out.write(f"{label} {shown(cell(value))}".rstrip() + "\n")


def for_terminal(text: str, out: TextIO) -> str:
    """``text`` with its control characters made visible when ``out`` is a terminal
    (:func:`tasktool.present.terminal.printable`): task fields, file names and remote data
    never drive the user's terminal. Unchanged otherwise."""
    if not is_terminal(out):
        return text
    from tasktool.present.terminal import printable

    return printable(text)


def emit_text(text: str, *, out: TextIO | None = None, escaped: bool = False) -> None:
    """Free text (a task body, a message naming a task) as is, through
    :func:`for_terminal` unless the caller ``escaped`` it already (text holding its own
    colour sequences)."""
    out = out or sys.stdout
    if not escaped:
        text = for_terminal(text, out)
    out.write(text if text.endswith("\n") or not text else text + "\n")
