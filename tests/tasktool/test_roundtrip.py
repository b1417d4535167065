"""Round-trip writes keep unknown keys, comments and key order (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mtcommon import load_text
from tasktool.files.parsing.roundtrip import apply_frontmatter, new_task_text
from tasktool.files.parsing.taskfile import split_frontmatter

_word = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)
_value = st.one_of(
    _word,
    st.from_regex(r"[0-9]{1,4}", fullmatch=True),
    st.lists(_word, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
    _word.map(lambda w: f"'{w} {w}'"),
)
_unknown = st.dictionaries(
    _word.map(lambda w: f"x_{w}"), st.tuples(_value, st.booleans()), min_size=1, max_size=6
)


def document(unknown: dict[str, tuple[str, bool]]) -> str:
    lines = ["---", "id: '7'", "title: Keep me", "status: pending"]
    for key, (value, commented) in unknown.items():
        if commented:
            lines.append(f"# about {key}")
        lines.append(f"{key}: {value}")
    lines.append("tags: [a]  # trailing comment")
    return "\n".join(lines) + "\n---\nBody line\n\n- [ ] item\n"


@settings(deadline=None)
@given(_unknown, st.sampled_from(["completed", "in-progress", "blocked"]))
def test_edit_keeps_unknown_keys_comments_order_and_body(
    unknown: dict[str, tuple[str, bool]], status: str
) -> None:
    text = document(unknown)
    edited = apply_frontmatter(text, {"status": status, "owner": "ann"}, source="t.md")
    before, after = split_frontmatter(text), split_frontmatter(edited)
    assert before is not None
    assert after is not None
    assert after[1] == before[1]  # body byte for byte
    old, new = load_text(before[0]), load_text(after[0])
    assert list(new) == [*old, "owner"]  # order kept, new key appended
    assert new == {**old, "status": status, "owner": "ann"}
    old_lines = before[0].splitlines()
    for line in old_lines:
        if line.startswith("#") or "#" in line:
            assert line in after[0].splitlines()  # every comment survives
    unchanged = [line for line in old_lines if not line.startswith("status:")]
    assert [line for line in after[0].splitlines() if line in unchanged] == unchanged


def test_list_edits_keep_flow_style_and_removal_deletes() -> None:
    text = "---\nid: '1'\ntitle: T\ntags: [a, b]  # why\ncompleted_at: 2024-01-01\n---\n"
    edited = apply_frontmatter(text, {"tags": ["a", "b", "c"], "completed_at": None}, source="t.md")
    assert edited == "---\nid: '1'\ntitle: T\ntags: [a, b, c]  # why\n---\n"


def test_numeric_looking_ids_stay_strings() -> None:
    text = new_task_text(
        {"id": "010", "title": "yes", "dependencies": ["009"], "status": "pending"}
    )
    assert text == "---\nid: '010'\ntitle: 'yes'\nstatus: pending\ndependencies: ['009']\n---\n"
