from __future__ import annotations

import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtcommon import (
    YamlError,
    dump_roundtrip,
    find_duplicate_keys,
    load_roundtrip,
    load_safe,
    load_text,
)

BROKEN = "a: [1\nb: 2\n"


@pytest.mark.parametrize("loader", [load_text, load_safe, load_roundtrip])
def test_syntax_errors_are_located(loader: Any) -> None:
    with pytest.raises(YamlError) as info:
        loader(BROKEN, source="conf.yaml")
    error = info.value
    assert error.code == "yaml.syntax"
    assert error.details == {"file": "conf.yaml", "line": 2, "column": 2}
    assert error.message.startswith("conf.yaml:2:2: ")
    assert "\n" not in error.message


def test_text_loader_keeps_scalars_as_text() -> None:
    assert load_text("id: 010\nflag: yes\nn: 1.50\nd: 2024-01-02\n") == {
        "id": "010",
        "flag": "yes",
        "n": "1.50",
        "d": "2024-01-02",
    }


def test_safe_loader_is_yaml_1_2() -> None:
    assert load_safe("a: yes\nb: 010\nc: [1, 2.5, null]\n") == {
        "a": "yes",
        "b": 10,
        "c": [1, 2.5, None],
    }


def test_duplicate_keys_are_refused_by_default() -> None:
    with pytest.raises(YamlError) as info:
        load_safe("id: 1\nid: 2\n", source="x.yaml")
    assert info.value.code == "yaml.duplicate_key"
    assert info.value.details == {"file": "x.yaml", "line": 2, "column": 1}


@pytest.mark.parametrize("loader", [load_safe, load_roundtrip])
def test_duplicate_keys_tolerated_on_request(loader: Any) -> None:
    data = loader("id:\n  strategy: random\nid:\n  strategy: ulid\n", allow_duplicate_keys=True)
    assert dict(data["id"]) == {"strategy": "random"}


def test_find_duplicate_keys_reports_dotted_paths() -> None:
    text = "id: {a: 1}\nid: {a: 2, a: 3}\nx: [{k: 1, k: 2}]\nok: 1\n"
    assert find_duplicate_keys(text) == ["id", "id.a", "x.0.k"]
    assert find_duplicate_keys("a: 1\nb: {c: 2}\n") == []


def test_find_duplicate_keys_locates_syntax_errors() -> None:
    with pytest.raises(YamlError) as info:
        find_duplicate_keys(BROKEN, source="f.yaml")
    assert info.value.details is not None
    assert info.value.details["line"] == 2


def test_roundtrip_keeps_comments_order_and_quotes() -> None:
    text = '# head\nzeta: 1  # trailing\nalpha: "quoted"\nlist:\n  - a\n  - b\n'
    data = load_roundtrip(text)
    assert dump_roundtrip(data) == text
    data["beta"] = 2
    out = dump_roundtrip(data)
    assert out.startswith('# head\nzeta: 1  # trailing\nalpha: "quoted"\n')
    assert out.endswith("beta: 2\n")


@pytest.mark.parametrize(
    "value", ["a\x85b", "a\u2028b", "a\u2029b", "\x85", "a\x85", "\u2028 x \u2029", "a\nb\x85c"]
)
@pytest.mark.parametrize("loader", [load_text, load_safe, load_roundtrip])
def test_unicode_line_breaks_round_trip_exactly(value: str, loader: Any) -> None:
    text = dump_roundtrip({"k": value})
    assert loader(text)["k"] == value, text
    assert load_safe(dump_roundtrip(load_roundtrip(text)))["k"] == value


keys = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=12)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    # Any text, NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR included; the line breaks
    # are drawn often, since arbitrary text rarely holds one.
    st.text(st.characters() | st.sampled_from("\x85\u2028\u2029\r"), max_size=40),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(keys, values, max_size=6))
def test_dump_then_safe_load_round_trips(data: dict[str, Any]) -> None:
    assert load_safe(dump_roundtrip(data)) == data


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(keys.filter(lambda k: k != "zz_added"), values, min_size=1, max_size=6),
    st.text(string.ascii_letters, max_size=20),
)
def test_roundtrip_edit_keeps_comment_and_other_keys(data: dict[str, Any], note: str) -> None:
    text = f"# {note}\n" + dump_roundtrip(data)
    doc = load_roundtrip(text)
    doc["zz_added"] = 1
    again = dump_roundtrip(doc)
    assert again.startswith(f"# {note}\n")
    assert load_safe(again) == {**data, "zz_added": 1}
    assert list(load_roundtrip(again))[-1] == "zz_added"
