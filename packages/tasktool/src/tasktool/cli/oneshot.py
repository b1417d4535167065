"""What a ``tasktool`` process may skip because it runs one command and ends.

A read command of a large repository spends a noticeable share of its time
(``docs/benchmarks.md``, "Figures behind tasktool's code") on memory work that buys
nothing in a process about to end: cyclic collections that walk the loaded tasks (half a
million tuples, none of them garbage) and, at exit, freeing them object by object. When
``tasktool`` is its own process (:func:`tasktool.cli.main.run`, the console script and
``python -m tasktool``), this module skips both:

- :meth:`Process.load`: the collector is paused while the tasks load, then ``gc.freeze()`` moves
  everything alive into its permanent generation and the loaded repository stays
  referenced. Other commands get the collector back for what they allocate next; a read
  command does not: what it allocates after the load is its answer, freed by reference
  counting (peak memory is the same either way);
- :meth:`Process.end`, after a read command (``@facts(reads=True)``) whose output is
  flushed: the process ends with ``os._exit`` and the command's exit status, skipping the
  interpreter's teardown. Only when that teardown has nothing else to do: no ``atexit``
  handler registered (tasktool registers none; ``concurrent.futures`` does, through
  ``logging`` and its thread pools, imported only by a cold read's reader threads; a
  cold parse's children are bare forks) and no other thread alive (the reader pool is
  joined before any output); otherwise the process exits as usual.

The entry point makes the one :class:`Process` that says so and hands it to the command
line (click's ``obj``), which keeps it in the invocation's options: a value passed down,
not a switch on the module. In-process callers (tests through click's ``CliRunner``, the
web server, the MCP server, library users) get an ordinary :class:`Process`: for them
nothing here does anything.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["Process", "T"]

T = TypeVar("T")


class Process:
    """How this invocation's process may end: as one command's process (``one_shot``, made
    by the entry point only) or as any other caller's; whether the command only reads
    (:meth:`reading`), and what it loaded (kept until the process ends)."""

    __slots__ = ("kept", "one_shot", "read_only")

    def __init__(self, *, one_shot: bool = False) -> None:
        self.one_shot = one_shot
        self.read_only = False
        self.kept: list[object] = []

    def reading(self, read_only: bool) -> None:
        """Whether the command about to run only reads (then :meth:`end` may end the
        process): its facts say so (``@facts(reads=True)``)."""
        self.read_only = read_only

    def load(self, make: Callable[[], T]) -> T:
        """``make()`` (a load). In a one-shot process the collector is paused while it
        runs, then everything alive is frozen (out of the collector's sight) and the
        result kept until the process ends; elsewhere just ``make()``."""
        if not self.one_shot:
            return make()
        enabled = gc.isenabled()
        gc.disable()
        try:
            loaded = make()
        finally:
            gc.freeze()
            if enabled and not self.read_only:
                gc.enable()
        self.kept.append(loaded)
        return loaded

    def end(self, status: int) -> None:
        """After a read command: flush the output and end the process now with
        ``status``. Returns (does nothing) in any other case, and whenever the
        interpreter's exit still has work: an ``atexit`` handler registered (coverage
        measuring subprocesses, a ``sitecustomize``) or a thread still running. The
        caller then exits as usual."""
        if not (self.one_shot and self.read_only):
            return
        if _exit_handlers() != 0 or threading.active_count() > 1:
            return
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:
            return  # the usual exit path reports (or silences) a broken pipe
        os._exit(status)


def _exit_handlers() -> int | None:
    """How many ``atexit`` handlers are registered; ``None`` where the interpreter does not
    say (``atexit._ncallbacks`` is CPython's), which counts as some."""
    count: Callable[[], int] | None = getattr(atexit, "_ncallbacks", None)
    return None if count is None else count()
