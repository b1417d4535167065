"""Tuning with the simulator on 20,000 generated arrivals: a narrow widening window waits
longer and matches closer than a wide one, both match nearly everyone, reruns agree byte
for byte, and the HTML report shows both."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.matchmaker.simulate.traces import generated, ranked, simulate, write_lines, write_policy

NARROW = {**ranked(25, {"everyMs": 2000, "by": 25, "max": 400}), "name": "narrow"}
WIDE = {**ranked(300), "name": "wide"}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tuning")
    return {
        "arrivals": write_lines(folder / "arrivals.jsonl", generated(20_000)),
        "narrow": write_policy(folder / "narrow.json", NARROW),
        "wide": write_policy(folder / "wide.json", WIDE),
        "folder": folder,
    }


def _run(files: dict[str, Path], report: str) -> tuple[str, str]:
    path = files["folder"] / report
    result = simulate(
        "--policy", files["narrow"], "--compare", files["wide"],
        "--arrivals", files["arrivals"], "--report", path,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.stdout, path.read_text(encoding="utf-8")


def test_a_narrow_window_waits_longer_and_matches_closer(files: dict[str, Path]) -> None:
    output, _ = _run(files, "first.html")
    narrow, wide = json.loads(output)["policies"]
    assert (narrow["name"], wide["name"]) == ("narrow", "wide")
    for figures in (narrow, wide):
        assert figures["entries"] == 20_000
        assert figures["matched"] >= 0.99 * 20_000
        assert figures["sessions"] * 2 == figures["matched"]
    assert narrow["wait_ms"]["p50"] > wide["wait_ms"]["p50"]
    assert narrow["wait_ms"]["p90"] > wide["wait_ms"]["p90"]
    assert narrow["spread"]["rating"]["p50"] < wide["spread"]["rating"]["p50"]
    assert narrow["spread"]["rating"]["p90"] < wide["spread"]["rating"]["p90"]
    assert wide["spread"]["rating"]["max"] <= 300  # no group wider than its window


def test_reruns_agree_and_the_report_shows_both(files: dict[str, Path]) -> None:
    first = _run(files, "first.html")
    again = _run(files, "again.html")
    assert first == again  # the JSON and the HTML, byte for byte
    page = first[1]
    sections = re.findall(r"<section><h2>([^<]*)</h2>(.*?)</section>", page, re.DOTALL)
    assert [name for name, _ in sections] == ["narrow", "wide"]
    for _, body in sections:
        assert body.count("<svg") == 3  # wait, spread, wait against spread
        assert body.count("<rect") > 5
        assert body.count("<circle") > 1000
    assert "<script" not in page
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
