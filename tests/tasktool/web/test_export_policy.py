"""An exported page carries the dashboard's Content-Security-Policy itself."""

from __future__ import annotations

import re

from tasktool.config import Overrides
from tasktool.planning.repository import loader
from tasktool.web.export import export_site
from tasktool.web.security import SECURITY_HEADERS
from tests.tasktool.conftest import Project
from tests.tasktool.web.conftest import seed_tasks

_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">')


def test_every_exported_page_has_the_dashboard_policy(project: Project) -> None:
    seed_tasks(project)
    out = project.root / "site"
    export_site(loader(Overrides(config=str(project.root / ".tasktool.yaml"))), out)
    header = dict(SECURITY_HEADERS)[b"content-security-policy"].decode()
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        found = _META.findall(page.read_text(encoding="utf-8").split("</head>")[0])
        assert len(found) == 1, page
        policy = found[0].replace("&#x27;", "'")
        # The header's policy, but frame-ancestors, which a <meta> element cannot carry.
        assert header == f"{policy}; frame-ancestors 'none'"
