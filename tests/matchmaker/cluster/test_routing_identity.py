"""A forwarded request carries its client's identity, so the owner's proxy is the same player."""

from __future__ import annotations

from matchmaker.cluster.messages import Command
from matchmaker.cluster.routing import Post, Router
from matchmaker.config import Limits
from matchmaker.core import Matchmaker
from matchmaker.core.commands import EnterPool
from matchmaker.core.conversation import Conversation
from matchmaker.directory import ProjectDirectory
from matchmaker.model import MatchmakingPolicy, Project

PROJECT = Project(
    id="p",
    policies=tuple(
        MatchmakingPolicy(name=name, mode="auto", group_size=2) for name in "abcdefghij"
    ),
)
DIRECTORY = ProjectDirectory([PROJECT])
LIVE = frozenset({"m1", "m2"})


def member(name: str) -> tuple[Matchmaker, Router]:
    core = Matchmaker(Limits(), node=name)

    def conversation(now_ms: int) -> Conversation:
        return Conversation(core, DIRECTORY, require_declared=False, now_ms=now_ms)

    router = Router(name, core, LIVE, project=lambda client: PROJECT, conversation=conversation)
    return core, router


def test_the_owner_s_proxy_keeps_the_player_id_of_a_token_bound_client() -> None:
    home_core, home = member("m1")
    owner_core, owner = member("m2")
    local = Conversation(home_core, DIRECTORY, require_declared=False, now_ms=0)
    local.adopt("cm1-1", "p", None, {"region": "eu"}, player_id="player-7")
    posts = []
    for policy in "abcdefghij":  # some policy's pool is owned by the other member
        actions = home.forward(local, EnterPool(policy=policy), "1", 0, sendable=True)
        posts = [a for a in actions or () if isinstance(a, Post) and a.node == "m2"]
        if posts:
            break
    (post,) = posts
    assert isinstance(post.message, Command)
    assert post.message.player_id == "player-7"
    owner.receive("m1", post.message, 0)
    assert owner_core.clients["cm1-1"].player_id == "player-7"
