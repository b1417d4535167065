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
MAX_NAME_CHARS = 128
MAX_SECRET_CHARS = 1024

# Constraints msgspec checks while decoding (and publishes in the JSON Schema).
# One rule for every name, on both planes: a Project id, a policy, pool or
# session name is 1 to 128 characters without control characters, because names
# are keys in SQL stores, appear in URLs and logs, and a name one plane accepts
# must be usable on the other. The data plane decodes its names with ``Name``;
# the control plane checks policy names with :func:`name_problem` (the same
# type), so Projects stored before the rule still load and can be fixed.
_NAME_META = msgspec.Meta(min_length=1, max_length=MAX_NAME_CHARS, pattern=r"^[^\x00-\x1f\x7f]+$")
Name = Annotated[str, _NAME_META]
"""A Project id, policy, pool or session name, as both planes accept it."""
ProjectId = Annotated[
    str,
    _NAME_META,
    msgspec.Meta(
        description="The key clients declare at handshake as `project`; immutable; "
        "`default` is reserved.",
    ),
]
PolicyName = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        description=f"1 to {MAX_NAME_CHARS} characters without control characters "
        "(the name rule of both planes); unique in the Project.",
    ),
]
Secret = Annotated[
    str,
    msgspec.Meta(
        min_length=1, description=f"A client credential: 1 to {MAX_SECRET_CHARS} characters."
    ),
]
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
    secret: Secret
    scopes: tuple[KeyScope, ...] = ()


class MatchmakingPolicy(
    msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=True, rename="camel"
):
    """A pre-declared pool that clients reference by ``name``."""

    name: PolicyName
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


def name_problem(value: str) -> str | None:
    """Why ``value`` breaks the name rule (``Name``), or ``None`` when it keeps it."""
    try:
        msgspec.convert(value, Name)
    except msgspec.ValidationError as exc:
        return str(exc)
    return None
