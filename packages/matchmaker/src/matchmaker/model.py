"""Project records: the durable configuration the control plane manages.

These Structs are both the stored shape and the ``/admin`` wire shape (camelCase
on the wire, as in the specification). Field-level rules that msgspec cannot
express (reserved ids, unique policy names, one default) live in the control
plane's validation, so a ``Project`` held by the store or the directory is
always valid.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

PoolMode = Literal["auto", "claim", "mutual", "propose", "delegated"]
FilterValue = str | int | float | bool
SELF = "@self"
RESERVED_PROJECT_ID = "default"
MAX_PROJECT_ID_CHARS = 128

# Constraints msgspec checks while decoding (and publishes in the JSON Schema).
# Control characters are refused in ids because ids are primary keys in SQL
# stores and appear in URLs and logs.
ProjectId = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=MAX_PROJECT_ID_CHARS,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="The key clients declare at handshake as `project`; immutable; "
        "`default` is reserved.",
    ),
]
NonEmptyStr = Annotated[str, msgspec.Meta(min_length=1)]
GroupSize = Annotated[
    int,
    msgspec.Meta(ge=1, description="Clients per match, at most the server's max session size."),
]


KeyScope = Literal["delegate"]
"""What a key allows beyond joining its Project: ``delegate`` may attach as the delegate
of a delegated pool (``delegate.attach``)."""


class ProjectKey(msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=True):
    """A credential binding: a client presenting ``secret`` belongs to this Project.

    ``scopes`` (optional, each at most once) grants more than joining the Project.
    """

    type: Literal["shared-secret"]
    secret: NonEmptyStr
    scopes: tuple[KeyScope, ...] = ()


class MatchmakingPolicy(
    msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=True, rename="camel"
):
    """A pre-declared pool that clients reference by ``name``."""

    name: NonEmptyStr
    mode: PoolMode
    group_size: GroupSize
    default: bool = False
    filter: dict[str, FilterValue] | None = None


class Project(
    msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=False, rename="camel"
):
    """A declared Project: policies, credential bindings and the lockdown flag."""

    id: ProjectId
    display_name: str | None = None
    lockdown: bool = False
    keys: tuple[ProjectKey, ...] = ()
    policies: tuple[MatchmakingPolicy, ...] = ()

    def policy(self, name: str) -> MatchmakingPolicy | None:
        """The policy called ``name``, if declared."""
        return next((p for p in self.policies if p.name == name), None)

    def default_policy(self) -> MatchmakingPolicy | None:
        """The policy marked ``default: true``, if any."""
        return next((p for p in self.policies if p.default), None)
