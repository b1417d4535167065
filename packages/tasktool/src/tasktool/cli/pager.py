"""Long output through a pager, as git does: ``$PAGER`` (default ``less -R``), only when
stdout is a terminal, never with ``--no-pager``.

Output is collected while the command runs (the collector says it is a terminal, so tables
are still fitted and coloured), then shown directly when it fits on one screen and through
the pager otherwise. ``PAGER=cat`` or an empty ``PAGER`` turns paging off; a pager that
cannot be started is skipped and the text printed. ``LESS`` defaults to ``FRX`` as in git.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator

__all__ = ["DEFAULT_PAGER", "paging"]

DEFAULT_PAGER = "less -R"


class _Collector(io.StringIO):
    """stdout while a paged command runs: a terminal, as far as the renderers can tell."""

    def isatty(self) -> bool:
        return True


def _pager_command() -> list[str] | None:
    import shlex  # on a terminal only, as in _show

    command = os.environ.get("PAGER", DEFAULT_PAGER).strip()
    if not command or command == "cat":
        return None
    return shlex.split(command)


def _show(text: str) -> None:
    # Imported here, on a terminal only: piped output (scripts, benchmarks) starts faster.
    import subprocess

    from tasktool.present.terminal import terminal_height

    command = _pager_command()
    if command is None or text.count("\n") < terminal_height():
        sys.stdout.write(text)
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    try:
        pager = subprocess.Popen(command, stdin=subprocess.PIPE, env=env)
    except OSError:
        sys.stdout.write(text)
        return
    assert pager.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # the reader quit before the end
        pager.stdin.write(text.encode("utf-8", "replace"))
        pager.stdin.close()
    pager.wait()


@contextlib.contextmanager
def paging(enabled: bool) -> Iterator[None]:
    """Collect stdout and page it at the end, when ``enabled`` and stdout is a terminal."""
    stdout = sys.stdout
    if not enabled or not stdout.isatty():
        yield
        return
    collector = _Collector()
    sys.stdout = collector
    try:
        yield
    finally:
        sys.stdout = stdout
        _show(collector.getvalue())
