"""``matchmaker admin``: a command-line client of the management port."""

from __future__ import annotations
