from __future__ import annotations

from tasktool.cli import main

main()
