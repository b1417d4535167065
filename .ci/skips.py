"""Count the skips in CI's JUnit reports; fail on any not in .ci/allowed-skips.txt.

Usage: python3 .ci/skips.py REPORT_DIR. Prints every skip with its reason and
the total, and exits 1 if a skip is not allowed, if an allow-list entry has
no reason, or if there are no reports at all.
"""

from __future__ import annotations

import fnmatch
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ALLOW_LIST = Path(__file__).with_name("allowed-skips.txt")


def allowed_patterns(path: Path) -> list[str]:
    patterns = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pattern, _, reason = line.partition(" # ")
        if not reason.strip():
            sys.exit(f"{path}:{number}: an allowed skip needs a reason after ' # '")
        patterns.append(pattern.strip())
    return patterns


def skips(report: Path) -> list[tuple[str, str]]:
    found = []
    for case in ET.parse(report).iter("testcase"):
        skipped = case.find("skipped")
        if skipped is not None:
            test_id = f"{case.get('classname')}::{case.get('name')}"
            found.append((test_id, skipped.get("message", "")))
    return found


def main(argv: list[str]) -> int:
    reports = sorted(Path(argv[1]).glob("*.xml"))
    if not reports:
        print(f"no JUnit reports in {argv[1]}: did the tests run?", file=sys.stderr)
        return 1
    patterns = allowed_patterns(ALLOW_LIST)
    unexpected = 0
    total = 0
    for report in reports:
        for test_id, reason in skips(report):
            total += 1
            ok = any(fnmatch.fnmatchcase(test_id, pattern) for pattern in patterns)
            unexpected += not ok
            print(f"{'allowed' if ok else 'UNEXPECTED'} skip ({report.stem}): {test_id}: {reason}")
    print(f"{total} skipped in {len(reports)} reports, {unexpected} not on {ALLOW_LIST.name}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
