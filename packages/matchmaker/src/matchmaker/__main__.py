from __future__ import annotations

from matchmaker.cli import main

main()
