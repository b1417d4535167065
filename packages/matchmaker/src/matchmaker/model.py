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
NonEmptyStr = Annotated[str, msgspec.Meta(min_length=1)]
GroupSize = Annotated[
    int,
    msgspec.Meta(ge=1, description="Clients per match, at most the server's max session size."),
]


MAX_WINDOW = 1_000_000_000
"""The largest rating distance a range rule may name (any finite scale fits below it)."""
Distance = (
    Annotated[int, msgspec.Meta(ge=0, le=MAX_WINDOW)]
    | Annotated[float, msgspec.Meta(ge=0, le=MAX_WINDOW)]
)
Step = (
    Annotated[int, msgspec.Meta(gt=0, le=MAX_WINDOW)]
    | Annotated[float, msgspec.Meta(gt=0, le=MAX_WINDOW)]
)
# Milliseconds after the oldest member entered before a group of at least minGroupSize forms.
FillTimeout = Annotated[int, msgspec.Meta(ge=0, le=86_400_000)]


class Widen(msgspec.Struct, forbid_unknown_fields=True, frozen=True, rename="camel"):
    """How a range rule's window grows while an entry waits: ``by`` every ``everyMs``,
    up to ``max`` (at least the rule's ``within``, checked with the whole filter)."""

    every_ms: Annotated[int, msgspec.Meta(ge=1, le=86_400_000)]
    by: Step
    max: Distance


class RangeRule(msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=True):
    """A numeric attribute matched within a distance: two entries accept each other when
    their values differ by at most the smaller of their current windows."""

    within: Distance
    widen: Widen | None = None

    def window(self, waited_ms: int) -> float:
        """The window after waiting ``waited_ms``: ``within``, widened by whole steps."""
        widen = self.widen
        if widen is None:
            return self.within
        return min(self.within + widen.by * (waited_ms // widen.every_ms), widen.max)


FilterTerm = FilterValue | RangeRule
"""A filter value: a literal the attribute must equal, ``@self``, or a range rule."""

MAX_TEAMS = 16
"""The most teams a pool may declare (each is a list in ``session.created``)."""
MAX_REGIONS = 32
"""The most regions a ``pool.enter`` may measure (``latencies``: a client-sent map)."""
MAX_LATENCY_MS = 60_000
"""The largest latency a client may report, or a policy may accept (a minute)."""
TeamName = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
RegionName = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
Latency = Annotated[int, msgspec.Meta(ge=0, le=MAX_LATENCY_MS)]
Latencies = Annotated[dict[RegionName, Latency], msgspec.Meta(max_length=MAX_REGIONS)]
"""A client's measured round trip to each region, in milliseconds (``pool.enter``)."""


class Team(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One team of a group: its name and how many members it has."""

    name: TeamName
    size: Annotated[int, msgspec.Meta(ge=1)]


class Balance(
    msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=True, rename="camel"
):
    """The teams' mean ``attribute`` differ by at most ``maxDifference`` (widening as a
    range rule's window does, from each member's enter; the group takes the smallest)."""

    attribute: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    max_difference: Distance
    widen: Widen | None = None

    def allowed(self, waited_ms: int) -> float:
        """The largest difference a member who waited ``waited_ms`` accepts."""
        return RangeRule(self.max_difference, self.widen).window(waited_ms)


class Regions(
    msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=True, rename="camel"
):
    """A group forms in a region only when every member's measured latency to it is at most
    ``maxLatencyMs`` (widening as a range rule's window does, from each member's enter)."""

    max_latency_ms: Latency
    widen: Widen | None = None

    def allowed(self, waited_ms: int) -> float:
        """The largest latency a member who waited ``waited_ms`` accepts."""
        return RangeRule(self.max_latency_ms, self.widen).window(waited_ms)


KeyScope = Literal["delegate"]
"""What a key allows beyond joining its Project: ``delegate`` may attach as the delegate
of a delegated pool (``delegate.attach``)."""


JwtAlgorithm = Literal["EdDSA", "ES256", "RS256", "HS256"]
ClaimTarget = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^attributes\.[A-Za-z0-9_.-]{1,64}$",
        description="`attributes.<name>`: the trusted attribute a claim fills.",
    ),
]
ClaimName = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class ProjectKey(msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=True):
    """A credential binding: a client presenting a matching credential belongs to this Project.

    ``shared-secret``: the client presents ``secret`` itself; ``scopes`` (optional,
    each at most once) grants more than joining the Project. ``jwt``: the client
    presents a token signed with ``key`` (a PEM public key, or the HS256 secret)
    under ``algorithm``, with ``issuer``/``audience`` when set; its ``sub`` is the
    player id and ``claims`` names the claims copied into trusted attributes. One
    Struct with a ``type`` rather than a union, so the stored and wire shapes of
    existing keys stay as they were; the control plane checks which fields each
    type takes.
    """

    type: Literal["shared-secret", "jwt"]
    secret: Secret | None = None
    scopes: tuple[KeyScope, ...] = ()
    algorithm: JwtAlgorithm | None = None
    key: NonEmptyStr | None = None
    issuer: NonEmptyStr | None = None
    audience: NonEmptyStr | None = None
    claims: dict[ClaimName, ClaimTarget] | None = None

    @property
    def sealed_field(self) -> str | None:
        """The field that holds a secret (sealed at rest, never shown in logs), if any:
        a shared secret, or an HS256 key (a public key is no secret)."""
        if self.type == "shared-secret":
            return "secret"
        return "key" if self.algorithm == "HS256" else None


class MatchmakingPolicy(
    msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=True, rename="camel"
):
    """A pre-declared pool that clients reference by ``name``.

    ``groupSize`` is the most members a group has; with ``minGroupSize`` and
    ``fillTimeoutMs`` (``auto`` only) a smaller group forms once its oldest member
    waited that long. ``teams``, ``balance`` and ``regions`` (``auto`` only, see
    :mod:`matchmaker.core.modes.teams`) split the group into named teams, balance them
    and choose the region every member reaches fast enough.
    """

    name: PolicyName
    mode: PoolMode
    group_size: GroupSize
    default: bool = False
    filter: dict[str, FilterTerm] | None = None
    min_group_size: GroupSize | None = None
    fill_timeout_ms: FillTimeout | None = None
    teams: Annotated[tuple[Team, ...], msgspec.Meta(max_length=MAX_TEAMS)] | None = None
    balance: Balance | None = None
    regions: Regions | None = None


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

    def shared_secrets(self) -> list[str]:
        """The secrets of its ``shared-secret`` keys: each binds a credential to this Project
        (a secret is bound to at most one Project; a jwt key binds by verifying)."""
        return [key.secret for key in self.keys if key.secret is not None]

    def jwt_keys(self) -> list[ProjectKey]:
        """Its ``jwt`` keys, in declared order."""
        return [key for key in self.keys if key.type == "jwt"]

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
