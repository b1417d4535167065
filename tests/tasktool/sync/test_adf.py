"""ADF to Markdown: each node kind, and arbitrary valid ADF never crashes the converter."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasktool.sync.adf import MAX_DEPTH, NODE_TYPES, adf_to_markdown
from tests.tasktool.sync.trackers import adf, paragraph, text


def item(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "listItem", "content": list(blocks)}


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("paragraphs", adf(paragraph(text("a")), paragraph(text("b"))), "a\n\nb\n"),
    (
        "heading levels",
        adf({"type": "heading", "attrs": {"level": 3}, "content": [text("H")]}),
        "### H\n",
    ),
    (
        "marks",
        adf(
            paragraph(
                text("b", "strong"),
                text(" "),
                text("i", "em"),
                text(" "),
                text("c", "code"),
                text(" "),
                text("s", "strike"),
                text(" "),
                {"type": "text", "text": "l", "marks": [{"type": "link", "attrs": {"href": "u"}}]},
            )
        ),
        "**b** *i* `c` ~~s~~ [l](u)\n",
    ),
    (
        "spaces move outside marks",
        adf(paragraph(text("bold ", "strong"), text("x"))),
        "**bold** x\n",
    ),
    ("markdown characters escaped", adf(paragraph(text("a*b_c"))), "a\\*b\\_c\n"),
    ("hard break", adf(paragraph(text("a"), {"type": "hardBreak"}, text("b"))), "a\\\nb\n"),
    (
        "nested bullets keep indentation",
        adf(
            {
                "type": "bulletList",
                "content": [
                    item(
                        paragraph(text("one")),
                        {
                            "type": "bulletList",
                            "content": [
                                item(
                                    paragraph(text("two")),
                                    {
                                        "type": "orderedList",
                                        "content": [item(paragraph(text("three")))],
                                    },
                                )
                            ],
                        },
                    ),
                    item(paragraph(text("four"))),
                ],
            }
        ),
        "- one\n  - two\n    1. three\n- four\n",
    ),
    (
        "ordered list start",
        adf(
            {
                "type": "orderedList",
                "attrs": {"order": 9},
                "content": [item(paragraph(text("a"))), item(paragraph(text("b")))],
            }
        ),
        "9. a\n10. b\n",
    ),
    (
        "code block with language and backticks inside",
        adf({"type": "codeBlock", "attrs": {"language": "py"}, "content": [text("x\n```")]}),
        "````py\nx\n```\n````\n",
    ),
    (
        "blockquote",
        adf({"type": "blockquote", "content": [paragraph(text("a")), paragraph(text("b"))]}),
        "> a\n>\n> b\n",
    ),
    (
        "table",
        adf(
            {
                "type": "table",
                "content": [
                    {
                        "type": "tableRow",
                        "content": [
                            {"type": "tableHeader", "content": [paragraph(text("k"))]},
                            {"type": "tableHeader", "content": [paragraph(text("v"))]},
                        ],
                    },
                    {
                        "type": "tableRow",
                        "content": [
                            {"type": "tableCell", "content": [paragraph(text("a|b"))]},
                            {"type": "tableCell", "content": [paragraph(text("c"))]},
                        ],
                    },
                ],
            }
        ),
        "| k | v |\n| --- | --- |\n| a\\|b | c |\n",
    ),
    (
        "mention and emoji as text",
        adf(
            paragraph(
                {"type": "mention", "attrs": {"id": "x", "text": "@Ann"}},
                text(" "),
                {"type": "emoji", "attrs": {"shortName": ":tada:", "text": "🎉"}},
                {"type": "emoji", "attrs": {"shortName": ":custom:"}},
            )
        ),
        "@Ann 🎉:custom:\n",
    ),
    (
        "unknown nodes are recursed",
        adf({"type": "futureNode", "content": [paragraph(text("kept"))]}),
        "kept\n",
    ),
    ("rule", adf(paragraph(text("a")), {"type": "rule"}), "a\n\n---\n"),
    ("empty document", adf(), ""),
    ("plain string", "already text", "already text"),  # type: ignore[list-item]
]


@pytest.mark.parametrize(("name", "document", "expected"), CASES, ids=[c[0] for c in CASES])
def test_conversion(name: str, document: dict[str, Any], expected: str) -> None:
    assert adf_to_markdown(document) == expected


def test_deep_nesting_is_flattened_not_a_recursion_error() -> None:
    node: dict[str, Any] = paragraph(text("deep"))
    for _ in range(5000):
        node = {"type": "blockquote", "content": [node]}
    assert "deep" in adf_to_markdown(adf(node))
    assert MAX_DEPTH < 5000


# Valid ADF: the node kinds Jira sends, nested as the schema allows, with any text and attrs.
_TEXT = st.text(max_size=12)
_MARK = st.sampled_from(
    [
        {"type": "strong"},
        {"type": "em"},
        {"type": "code"},
        {"type": "strike"},
        {"type": "underline"},
        {"type": "link", "attrs": {"href": "https://example.com/x"}},
        {"type": "textColor", "attrs": {"color": "#ff0000"}},
        {"type": "subsup", "attrs": {"type": "sub"}},
    ]
)
_INLINE = st.one_of(
    st.builds(
        lambda value, marks: {"type": "text", "text": value or "x", "marks": marks},
        _TEXT,
        st.lists(_MARK, max_size=3, unique_by=lambda mark: mark["type"]),
    ),
    st.just({"type": "hardBreak"}),
    st.builds(lambda t: {"type": "mention", "attrs": {"id": "1", "text": t}}, _TEXT),
    st.builds(lambda t: {"type": "emoji", "attrs": {"shortName": f":{t}:"}}, _TEXT),
    st.builds(lambda n: {"type": "date", "attrs": {"timestamp": str(n)}}, st.integers()),
    st.builds(lambda t: {"type": "status", "attrs": {"text": t, "color": "blue"}}, _TEXT),
    st.builds(lambda u: {"type": "inlineCard", "attrs": {"url": u}}, _TEXT),
)


def _paragraph(inline: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "paragraph", "content": inline}


_PARAGRAPH = st.lists(_INLINE, max_size=4).map(_paragraph)


def _nest(blocks: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    items = st.lists(blocks, min_size=1, max_size=3).map(
        lambda c: {"type": "listItem", "content": c}
    )
    cells = st.lists(blocks, min_size=1, max_size=2).map(
        lambda c: {"type": "tableCell", "content": c}
    )
    rows = st.lists(cells, min_size=1, max_size=3).map(lambda c: {"type": "tableRow", "content": c})
    return st.one_of(
        st.lists(items, min_size=1, max_size=3).map(lambda c: {"type": "bulletList", "content": c}),
        st.builds(
            lambda c, order: {"type": "orderedList", "attrs": {"order": order}, "content": c},
            st.lists(items, min_size=1, max_size=3),
            st.integers(min_value=0, max_value=10**6),
        ),
        st.lists(blocks, min_size=1, max_size=3).map(
            lambda c: {"type": "blockquote", "content": c}
        ),
        st.lists(blocks, max_size=3).map(
            lambda c: {"type": "panel", "attrs": {"panelType": "info"}, "content": c}
        ),
        st.builds(
            lambda c, title: {"type": "expand", "attrs": {"title": title}, "content": c},
            st.lists(blocks, max_size=2),
            _TEXT,
        ),
        st.lists(rows, min_size=1, max_size=3).map(lambda c: {"type": "table", "content": c}),
        st.lists(blocks, max_size=2).map(lambda c: {"type": "someFutureNode", "content": c}),
    )


_BLOCK = st.recursive(
    st.one_of(
        _PARAGRAPH,
        st.builds(
            lambda level, inline: {"type": "heading", "attrs": {"level": level}, "content": inline},
            st.integers(min_value=1, max_value=6),
            st.lists(_INLINE, max_size=3),
        ),
        st.builds(
            lambda language, value: {
                "type": "codeBlock",
                "attrs": {"language": language},
                "content": [{"type": "text", "text": value or "x"}],
            },
            _TEXT,
            _TEXT,
        ),
        st.just({"type": "rule"}),
        st.builds(
            lambda alt: {
                "type": "mediaSingle",
                "content": [{"type": "media", "attrs": {"id": "m", "type": "file", "alt": alt}}],
            },
            _TEXT,
        ),
    ),
    _nest,
    max_leaves=25,
)
_DOCUMENT = st.lists(_BLOCK, max_size=5).map(lambda c: {"type": "doc", "version": 1, "content": c})


@settings(max_examples=300, deadline=None)
@given(_DOCUMENT)
def test_any_valid_document_converts(document: dict[str, Any]) -> None:
    markdown = adf_to_markdown(document)
    assert isinstance(markdown, str)
    assert markdown == "" or markdown.endswith("\n")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=8), min_size=1, max_size=6))
def test_plain_words_survive(words: list[str]) -> None:
    document = adf(*(paragraph(text(word)) for word in words))
    assert adf_to_markdown(document) == "\n\n".join(words) + "\n"


_SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
_JSON = st.recursive(
    _SCALAR,
    lambda children: (
        st.lists(children, max_size=3)
        | st.fixed_dictionaries(
            {"type": st.sampled_from(sorted(NODE_TYPES)) | _SCALAR},
            optional={
                "content": children,
                "attrs": st.dictionaries(
                    st.sampled_from(["level", "order", "language", "href", "text", "timestamp"]),
                    children,
                    max_size=3,
                )
                | children,
                "text": children,
                "marks": children,
            },
        )
    ),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(_JSON)
def test_malformed_values_never_crash(value: Any) -> None:
    """Past valid ADF: any JSON, shaped like nodes or not, still gives text."""
    assert isinstance(adf_to_markdown(value), str)
