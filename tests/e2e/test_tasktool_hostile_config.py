"""Hostile configuration through the real CLI: wrong types, aliases, odd files, bad
environment values. Each gives a coded diagnostic, never a traceback or a hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .tasktool_hostile import Hostile

_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    return Hostile(tmp_path)


# name -> (config text, code, exit status of ``list``: 1 when the config is rejected)
CONFIGS = {
    "dir as a list": ("dir: [a, b]\n", "config.type", 1),
    "dir as a map": ("dir: {a: 1}\n", "config.type", 1),
    "effort as a map": ("effort: {small: 1}\n", "config.effort.not_list", 1),
    "negative padding": ("id:\n  padding: -3\n", "config.type", 1),
    "huge padding": ("id:\n  padding: 100000000\n", "config.type", 1),
    "huge length": ("id:\n  length: 99999999999999999999999\n", "config.type", 1),
    "port 70000": ("web:\n  port: 70000\n", "config.type", 1),
    "port as a list": ("web:\n  port: [80]\n", "config.type", 1),
    "web as a list": ("web: [1, 2]\n", "config.type", 1),
    "id as a number": ("id: 5\n", "config.type", 1),
    "strategy as a list": ("id:\n  strategy: [ulid]\n", "config.type", 1),
    "ignore as text": ("ignore: node\n", "config.type", 1),
    "ignore with a map": ("ignore: [a, {b: c}]\n", "config.type", 1),
    "worklogs maybe": ("worklogs: maybe\n", "config.type", 1),
    "phases as a map": ("phases: {mvp: x}\n", "config.phases.type", 0),
    "phase id as a list": ("phases: [{id: [a], name: A}]\n", "config.phases.id", 0),
    "phase description map": (
        "phases: [{id: a, name: A, description: {b: c}}]\n",
        "config.phases.description",
        0,
    ),
    "scopes as a number": ("scopes: 5\n", "config.scopes.type", 0),
    "next as a list": ("next: [a]\n", "config.next.type", 0),
    "list document": ("- a\n- b\n", "config.not_mapping", 1),
    "scalar document": ("just text\n", "config.not_mapping", 1),
    "two documents": ("a: 1\n---\nb: 2\n", "config.syntax", 1),
    "bad yaml": ("effort: [small\n", "config.syntax", 1),
    "billion laughs": (_LAUGHS + "ignore: *i\n", "config.too_large", 1),
    "anchored effort": ("x: &e [small, big]\neffort: *e\n", "config.unknown_key", 0),
}


@pytest.mark.parametrize("name", CONFIGS)
def test_bad_config_values_give_coded_diagnostics(hostile: Hostile, name: str) -> None:
    text, code, list_exit = CONFIGS[name]
    (hostile.root / ".tasktool.yaml").write_text(text)
    listed = hostile.run("list", expect=list_exit)
    if list_exit:
        assert f"[{code}" in listed.stderr
    validated = hostile.run("validate", expect=0 if code == "config.unknown_key" else 1)
    assert code in validated.stdout + validated.stderr
    refused = code.endswith(("mapping", "syntax", "too_large"))  # no values to show
    hostile.run("config", "show", expect=list_exit if refused else 0)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TASKTOOL_WEB_PORT", "abc"),
        ("TASKTOOL_WEB_PORT", "70000"),
        ("TASKTOOL_WORKTREE_SCOPE", "both"),
        ("TASKTOOL_ID_PADDING", "-1"),
        ("TASKTOOL_ID_LENGTH", "99999999999999999999999"),
        ("TASKTOOL_WORKLOGS", "maybe"),
    ],
)
def test_bad_environment_values_are_rejected(hostile: Hostile, variable: str, value: str) -> None:
    failed = hostile.run("list", expect=1, **{variable: value})
    assert failed.stderr.startswith(f"error: {variable}: ")
    assert failed.stderr.endswith("[config.env.invalid]\n")


def test_config_that_is_not_a_regular_file(hostile: Hostile) -> None:
    fifo = hostile.root / "fifo.yaml"
    os.mkfifo(fifo)  # reading it would block forever
    for path in (str(fifo), "/dev/zero", str(hostile.tasks)):
        failed = hostile.run("--config", path, "list", expect=1)
        assert failed.stderr.endswith("[config.unreadable]\n"), failed.stderr
    big = hostile.root / "big.yaml"
    big.write_text("a: b\n" * 300_000)
    assert "[config.unreadable]" in hostile.run("--config", str(big), "list", expect=1).stderr


def test_directory_named_like_the_config(hostile: Hostile) -> None:
    (hostile.root / ".tasktool.yaml").unlink()
    (hostile.root / ".tasktool.yaml").mkdir()
    assert "001" in hostile.run("list").stdout  # no config: the defaults apply
    failed = hostile.run("init", "--force", expect=1)
    assert failed.stderr.endswith("is a directory [config.exists]\n")
    assert (hostile.root / ".tasktool.yaml").is_dir()


@pytest.mark.unprivileged
def test_unreadable_config(hostile: Hostile) -> None:
    config = hostile.root / ".tasktool.yaml"
    config.chmod(0)
    try:
        assert "[config.unreadable]" in hostile.run("list", expect=1).stderr
    finally:
        config.chmod(0o644)
