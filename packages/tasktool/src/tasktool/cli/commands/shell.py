"""``completion``: Click's shell completion script, and task ids completed for commands
that take them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from tasktool.model.extras import require

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

__all__ = ["SHELLS", "complete_choices", "complete_ids", "completion_command"]

SHELLS = ("bash", "zsh", "fish")


def complete_ids(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Ids of the repository's tasks starting with ``incomplete`` (the title as help).

    Completion runs without the group's callback, so the global ``--config`` and
    ``--task-dir`` are read from the root context; any problem completes nothing.
    """
    del param
    # Imported here: the commands taking ids import this module; only completion needs these.
    from click.shell_completion import CompletionItem

    from tasktool.config import Overrides
    from tasktool.planning.repository import load_context

    root = ctx.find_root().params
    try:
        repo = load_context(Overrides(config=root.get("config"), task_dir=root.get("task_dir")))
    except Exception:
        return []
    return [
        CompletionItem(task.id, help=task.title)
        for task in repo.all_tasks
        if task.id.startswith(incomplete)
    ]


def complete_choices(
    values: tuple[str, ...],
) -> Callable[[click.Context, click.Parameter, str], list[CompletionItem]]:
    """Completion of an option's values (``--status``, ``--priority``): those starting
    with what is typed, after the last comma of a list (``pending,in-``)."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        del ctx, param
        from click.shell_completion import CompletionItem

        head, _, tail = incomplete.rpartition(",")
        prefix = f"{head}," if head else ""
        return [CompletionItem(prefix + value) for value in values if value.startswith(tail)]

    return complete


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion_command(ctx: click.Context, /, shell: str) -> None:
    """Print the shell completion script for bash, zsh or fish.

    \b
    bash: eval "$(tasktool completion bash)"   (in ~/.bashrc)
    zsh:  eval "$(tasktool completion zsh)"    (in ~/.zshrc)
    fish: tasktool completion fish > ~/.config/fish/completions/tasktool.fish
    """
    require("completion")
    from click.shell_completion import get_completion_class

    complete = get_completion_class(shell)
    assert complete is not None
    root = ctx.find_root()
    script = complete(root.command, {}, root.info_name or "tasktool", "_TASKTOOL_COMPLETE")
    click.echo(script.source())
