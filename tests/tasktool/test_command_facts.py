"""What the command line knows of a command before it runs (paged, ``--all-projects``,
whether it only reads)
is said on the command (``@facts``) and read from it, and the behaviour follows it."""

from __future__ import annotations

import click
from click.testing import CliRunner

from tasktool.cli.facts import CommandFacts, facts, facts_of
from tasktool.cli.main import main as tasktool

PAGED = {
    *("list", "get", "next", "tracks", "board", "stats", "graph", "validate"),
    *("todos", "worklog", "search", "tags", "config"),
}
READS = {"list", "get", "next", "tracks", "board", "stats", "graph", "validate", "tags", "search"}


def said() -> dict[str, CommandFacts]:
    context = click.Context(tasktool)
    assert isinstance(tasktool, click.Group)
    return {
        name: facts_of(tasktool.get_command(context, name))
        for name in tasktool.list_commands(context)
    }


def test_the_facts_are_on_the_commands() -> None:
    known = said()
    assert {name for name, found in known.items() if found.paged} == PAGED
    assert {name for name, found in known.items() if found.all_projects} == {
        *("list", "next", "board", "stats")
    }
    assert {name for name, found in known.items() if found.reads} == READS
    assert known["add"] == CommandFacts()


def test_a_command_says_its_facts_where_it_is_made() -> None:
    @facts(paged=True)
    @click.command("demo")
    def demo() -> None: ...

    assert facts_of(demo) == CommandFacts(paged=True)
    assert facts_of(click.Command("bare")) == CommandFacts()
    assert facts_of(None) == CommandFacts()


def test_all_projects_is_refused_naming_the_commands_that_aggregate() -> None:
    refused = CliRunner().invoke(tasktool, ["--all-projects", "tags"], prog_name="tasktool")
    assert refused.exit_code == 2
    assert "--all-projects works with board, list, next, stats, not tags" in refused.stderr
    (flag,) = [param for param in tasktool.params if param.name == "all_projects"]
    assert isinstance(flag, click.Option)
    assert flag.help is not None
    aggregating = {name for name, found in said().items() if found.all_projects}
    assert set(flag.help.partition(" over ")[0].split(", ")) == aggregating  # --help names them
