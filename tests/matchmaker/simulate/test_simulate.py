"""``matchmaker simulate``: the figures of small traces, exactly as docs/modes.md defines them,
and bad input refused before anything runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.matchmaker.simulate.traces import ranked, simulate, write_lines, write_policy

THREE = [
    {"at_ms": 0, "attributes": {"rating": 1000}},
    {"at_ms": 0, "attributes": {"rating": 1500}},
    {"at_ms": 1000, "attributes": {"rating": 1050}},
]


def _figures(tmp_path: Path, policy: dict[str, Any], lines: list[dict[str, Any]], *extra: str):  # type: ignore[no-untyped-def]
    result = simulate(
        "--policy",
        write_policy(tmp_path / "policy.json", policy),
        "--arrivals",
        write_lines(tmp_path / "arrivals.jsonl", lines),
        *extra,
    )
    assert result.exit_code == 0, result.output
    (figures,) = json.loads(result.stdout)["policies"]
    return figures


def test_the_three_arrival_trace_of_the_docs(tmp_path: Path) -> None:
    figures = _figures(tmp_path, ranked(100), THREE)
    assert figures == {
        "name": "ranked",
        "entries": 3,
        "matched": 2,
        "unmatched": 1,
        "sessions": 1,
        "wait_ms": {"p50": 0, "p90": 1000, "p99": 1000, "max": 1000},
        "spread": {"rating": {"p50": 50, "p90": 50, "max": 50}},
    }


def test_the_docs_show_what_the_three_arrival_trace_gives(tmp_path: Path) -> None:
    text = (Path(__file__).parents[3] / "docs" / "modes.md").read_text(encoding="utf-8")
    section = text.split("The JSON document (", 1)[1]
    shown = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])
    assert shown == {"policies": [_figures(tmp_path, ranked(100), THREE)]}


def test_a_window_widens_at_its_step_on_the_simulated_clock(tmp_path: Path) -> None:
    """1000 and 1250 meet when the window reaches 300 (two steps of 1 s); the trace's last
    arrival at 5 s keeps the clock running past that."""
    lines = [
        {"at_ms": 0, "attributes": {"rating": 1000}},
        {"at_ms": 10, "attributes": {"rating": 1250}},
        {"at_ms": 5000, "attributes": {"rating": 9000}},
    ]
    policy = ranked(100, {"everyMs": 1000, "by": 100, "max": 300})
    figures = _figures(tmp_path, policy, lines)
    assert figures["sessions"] == 1
    assert figures["wait_ms"]["max"] == 2010  # the later one's window is 300 at 2010 ms
    assert figures["spread"]["rating"]["max"] == 250
    # Without the last arrival the trace ends at 10 ms, before any window widened.
    figures = _figures(tmp_path, policy, lines[:2])
    assert (figures["sessions"], figures["unmatched"]) == (0, 2)


def test_pool_replays_only_the_lines_recorded_under_that_policy(tmp_path: Path) -> None:
    lines = [{**line, "pool": pool} for line, pool in zip(THREE, ["a", "b", "a"], strict=True)]
    figures = _figures(tmp_path, ranked(100), lines, "--pool", "a")
    assert (figures["entries"], figures["sessions"]) == (2, 1)
    assert _figures(tmp_path, ranked(100), lines)["entries"] == 3


def test_an_entry_leaves_at_leave_ms_and_one_waiting_too_long_expires(tmp_path: Path) -> None:
    lines = [
        {"at_ms": 0, "attributes": {"rating": 1000}, "leave_ms": 500},
        {"at_ms": 100, "attributes": {"rating": 2000}},
        {"at_ms": 900, "attributes": {"rating": 1010}},  # the 1000 has left
        {"at_ms": 1500, "attributes": {"rating": 2010}},  # the 2000 expired at 1100
    ]
    figures = _figures(tmp_path, ranked(100), lines, "--entry-ttl-ms", "1000")
    assert (figures["matched"], figures["unmatched"], figures["sessions"]) == (0, 4, 0)
    assert figures["wait_ms"] == {"p50": None, "p90": None, "p99": None, "max": None}
    figures = _figures(tmp_path, ranked(100), lines)  # the default TTL: 10 minutes
    assert (figures["matched"], figures["sessions"]) == (2, 1)


def test_a_fill_timeout_forms_a_smaller_group_on_time(tmp_path: Path) -> None:
    lines = [{"at_ms": t, "attributes": {"rating": 1000}} for t in (0, 100, 5000)]
    policy = ranked(100, groupSize=3, minGroupSize=2, fillTimeoutMs=2000)
    figures = _figures(tmp_path, policy, lines)
    assert (figures["sessions"], figures["matched"]) == (1, 2)
    assert figures["wait_ms"]["max"] == 2000


def test_compare_and_table_show_both_policies_side_by_side(tmp_path: Path) -> None:
    arrivals = write_lines(tmp_path / "a.jsonl", THREE)
    wide = write_policy(tmp_path / "wide.json", {**ranked(600), "name": "wide"})
    narrow = write_policy(tmp_path / "narrow.yaml", ranked(100))
    narrow.write_text(  # the same policy as YAML
        "name: ranked\nmode: auto\ngroupSize: 2\nfilter:\n  rating: {within: 100}\n"
    )
    result = simulate(
        "--policy", narrow, "--compare", wide, "--arrivals", arrivals, "--format", "table"
    )
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if "ranked" in line)
    assert header.index("ranked") < header.index("wide")
    rows = {
        line.split()[1]: [cell for cell in line.split()[2:] if cell.isdigit()]
        for line in result.stdout.splitlines()
        if line.startswith("│")
    }
    assert rows["sessions"] == ["1", "1"]
    assert rows["unmatched"] == ["1", "1"]
    spread = next(line for line in result.stdout.splitlines() if "rating spread max" in line)
    assert [cell for cell in spread.split() if cell.isdigit()] == ["50", "500"]


def _refused(result: Any) -> str:
    assert result.exit_code == 1
    assert result.stdout == ""  # nothing was run, nothing printed
    (line,) = result.stderr.splitlines()
    return str(line)


GOOD = '{"at_ms": 10, "attributes": {"rating": 1}}'
BAD_LINES = [
    ("{not json", "", "simulate.bad_arrival"),
    ('{"at_ms": 5}', "missing required field `attributes`", "simulate.bad_arrival"),
    ('{"at_ms": -1, "attributes": {}}', "Expected `int` >= 0", "simulate.bad_arrival"),
    ('{"at_ms": 5, "attributes": {}, "tok": 1}', "unknown field `tok`", "simulate.bad_arrival"),
    ('{"at_ms": 5, "attributes": {}, "leave_ms": 4}', "leave_ms is before", "simulate.bad_arrival"),
    ('{"at_ms": 5, "attributes": {}, "latencies": {"eu": "x"}}', "", "simulate.bad_arrival"),
    ('{"at_ms": 0, "attributes": {}}', "before the line above (10)", "simulate.out_of_order"),
    ('{"at_ms": 20, "attributes": {"level": 1}}', "attribute 'rating'", "pool.attribute_missing"),
    ('{"at_ms": 20, "attributes": {"rating": "x"}}', "must be a number", "pool.filter_mismatch"),
]


@pytest.mark.parametrize(("line", "message", "code"), BAD_LINES)
def test_a_bad_arrivals_line_is_named_and_nothing_runs(
    tmp_path: Path, line: str, message: str, code: str
) -> None:
    arrivals = tmp_path / "a.jsonl"
    arrivals.write_text(f"{GOOD}\n\n{line}\n")  # the blank line 2 is skipped, still counted
    policy = write_policy(tmp_path / "p.json", ranked(100))
    report = tmp_path / "r.html"
    shown = _refused(simulate("--policy", policy, "--arrivals", arrivals, "--report", report))
    assert shown.startswith("error: arrivals line 3: ")
    assert message in shown
    assert shown.endswith(f"[{code}]")
    assert not report.exists()


def test_latencies_are_accepted_and_carried_without_effect(tmp_path: Path) -> None:
    lines = [{**line, "latencies": {"eu": 20, "us": 95.5}} for line in THREE]
    assert _figures(tmp_path, ranked(100), lines) == _figures(tmp_path, ranked(100), THREE)


def test_a_mode_clients_choose_in_cannot_be_simulated(tmp_path: Path) -> None:
    policy = write_policy(tmp_path / "p.json", {"name": "m", "mode": "mutual", "groupSize": 2})
    arrivals = write_lines(tmp_path / "a.jsonl", THREE)
    shown = _refused(simulate("--policy", policy, "--arrivals", arrivals))
    assert shown.endswith("[simulate.unsupported]")


def test_a_missing_file_is_unreadable(tmp_path: Path) -> None:
    policy = write_policy(tmp_path / "p.json", ranked(100))
    shown = _refused(simulate("--policy", policy, "--arrivals", tmp_path / "none.jsonl"))
    assert shown.endswith("[simulate.unreadable]")


def test_a_policy_file_that_is_not_yaml_names_where(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("name: ranked\nfilter: [unclosed\n")
    arrivals = write_lines(tmp_path / "a.jsonl", THREE)
    shown = _refused(simulate("--policy", policy, "--arrivals", arrivals))
    assert shown.startswith(f"error: {policy}:")
    assert shown.endswith("[yaml.syntax]")
