"""What ``matchmaker simulate`` does, from file names to printed figures."""

from __future__ import annotations

import json
import sys

from matchmaker.config import Limits
from matchmaker.simulate.files import read_policy, read_trace, write_whole
from matchmaker.simulate.stats import to_json
from matchmaker.simulate.study import study

__all__ = ["simulate_files"]


def simulate_files(
    policy_files: list[str],
    arrivals_file: str,
    *,
    output: str,
    report_file: str | None,
    pool: str | None,
    limits: Limits,
) -> None:
    """Replay ``arrivals_file`` under each policy file; print the figures as ``output``
    (``json`` or ``table``) and write the HTML report. Every input is read and checked
    before anything runs, and nothing is printed or written if one is refused."""
    policies = [read_policy(path, limits) for path in policy_files]
    trace = read_trace(arrivals_file, pool=pool)
    summaries = study(policies, trace, limits)
    document = to_json(summaries)
    if report_file is not None:
        from matchmaker.simulate.report import render_report

        write_whole(report_file, render_report(summaries))
    if output == "table":
        from matchmaker.simulate.table import print_table

        print_table(document)
    else:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
