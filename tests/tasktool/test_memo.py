"""The memo: a value kept under its key in a state-folder file, atomic and best effort,
defined once (:mod:`tasktool.files.caches.memo`) for every memo tasktool keeps."""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec
import pytest

import tasktool
from tasktool.files.caches.memo import HEADER, Memo, Recording, commit, open_kept

SOURCE = Path(tasktool.__file__).parent
_INTS = msgspec.msgpack.Decoder(list[int])


def _path(tmp_path: Path) -> Path:
    return tmp_path / ".tasktool" / "memo.msgpack"


def test_a_value_is_recalled_under_its_key_and_the_newest_are_kept(tmp_path: Path) -> None:
    path = _path(tmp_path)
    assert Memo(path, "f-1", kept=2).recall(b"a", _INTS) is None
    for key, value in ((b"a", [1]), (b"b", [2]), (b"c", [3])):
        Memo(path, "f-1", kept=2).remember(key, value)
    memo = Memo(path, "f-1", kept=2)
    assert memo.recall(b"c", _INTS) == [3]
    assert memo.recall(b"b", _INTS) == [2]
    assert memo.recall(b"a", _INTS) is None  # the oldest of three, two kept
    assert (tmp_path / ".tasktool" / ".gitignore").read_text() == "*\n"


def test_another_format_or_a_damaged_file_counts_as_empty(tmp_path: Path) -> None:
    path = _path(tmp_path)
    Memo(path, "f-1").remember(b"k", [1])
    assert Memo(path, "f-2").recall(b"k", _INTS) is None
    assert Memo(path, "f-1").recall(b"k", msgspec.msgpack.Decoder(str)) is None
    path.write_bytes(b"\x93garbage")
    assert Memo(path, "f-1").recall(b"k", _INTS) is None
    Memo(path, "f-1").remember(b"k", [2])
    assert Memo(path, "f-1").recall(b"k", _INTS) == [2]


@pytest.mark.unprivileged  # root writes into read-only folders: nox -s unprivileged runs it
def test_a_read_only_folder_keeps_nothing_and_raises_nothing(tmp_path: Path) -> None:
    (tmp_path / ".tasktool").mkdir()
    (tmp_path / ".tasktool").chmod(0o500)
    try:
        Memo(_path(tmp_path), "f-1").remember(b"k", [1])
        assert not commit(_path(tmp_path), b"x")
        assert Memo(_path(tmp_path), "f-1").recall(b"k", _INTS) is None
    finally:
        (tmp_path / ".tasktool").chmod(0o700)


def test_a_folder_in_the_way_keeps_nothing_and_raises_nothing(tmp_path: Path) -> None:
    _path(tmp_path).mkdir(parents=True)
    Memo(_path(tmp_path), "f-1").remember(b"k", [1])
    assert Memo(_path(tmp_path), "f-1").recall(b"k", _INTS) is None
    (tmp_path / ".tasktool" / "output").write_bytes(b"")
    assert Recording.start(tmp_path / ".tasktool" / "output") is None


def test_a_recording_is_kept_whole_and_only_for_its_key(tmp_path: Path) -> None:
    path = tmp_path / ".tasktool" / "output" / "one"
    recording = Recording.start(path.parent)  # the key is known at the end
    assert recording is not None
    recording.write(b"hello ")
    recording.write(b"world")
    assert open_kept(path, b"key") is None  # not in place before it is finished
    assert recording.finish(path, b"key")
    handle = open_kept(path, b"key")
    assert handle is not None
    with handle:
        assert handle.read() == b"hello world"
    assert open_kept(path, b"other") is None
    dropped = Recording.start(path.parent)
    assert dropped is not None
    dropped.write(b"partial")
    dropped.drop()
    assert sorted(os.listdir(path.parent)) == ["one"]  # no temporary file left


def test_no_other_module_defines_a_memo() -> None:
    """Each memo of tasktool is a :class:`~tasktool.files.caches.memo.Memo` (or, for an output
    streamed to standard output, a :class:`~tasktool.files.caches.memo.Recording`): none defines
    its own file of keyed values (three modules each had a ``_Memo``)."""
    definers = sorted(
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if re.search(r"^class _?\w*Memo\b", path.read_text(encoding="utf-8"), re.MULTILINE)
    )
    assert definers == ["files/caches/memo.py"]


def test_a_key_larger_than_its_room_keeps_nothing(tmp_path: Path) -> None:
    path = tmp_path / ".tasktool" / "output" / "one"
    recording = Recording.start(path.parent)
    assert recording is not None
    recording.write(b"output")
    assert not recording.finish(path, b"k" * HEADER)
    assert open_kept(path, b"k" * HEADER) is None
    assert os.listdir(path.parent) == []  # no temporary file left
