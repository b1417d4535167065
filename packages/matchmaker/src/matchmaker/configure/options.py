"""The option table: every setting of the ``matchmaker`` command, described once.

Each :class:`Option` names its :class:`~matchmaker.config.ServerConfig` field,
its flags, its environment variables, its config-file key, its type, default
and help group. The Click options, the environment and config-file readers,
``matchmaker config show`` and the environment table of ``docs/operations.md``
are all derived from :data:`OPTIONS`, so none of them can name a setting the
others do not know.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from matchmaker.config import LOG_FORMATS, SERVER_CHOICES, ControlLimits, Limits, ServerConfig

__all__ = [
    "ADMIN_OPTIONS",
    "CONFIG_OPTION",
    "ENV_PREFIX",
    "GROUPS",
    "OPTIONS",
    "PROCESS",
    "Kind",
    "Option",
    "option_for_key",
]

ENV_PREFIX = "MATCHMAKER_"

NETWORK = "Network"
STORE = "Store and control plane"
DATA_LIMITS = "Data-plane limits"
CONTROL_LIMITS = "Control-plane limits"
PROCESS = "Process"
GROUPS = (NETWORK, STORE, DATA_LIMITS, CONTROL_LIMITS, PROCESS)

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True, slots=True)
class Kind:
    """A value type: how text (flags, environment) and YAML values become a setting.

    ``parse`` raises ``ValueError`` with a message that completes "… must be".
    """

    name: str
    minimum: float | None = None
    exclusive_minimum: bool = False
    maximum: int | None = None
    choices: tuple[str, ...] = ()

    def parse(self, raw: object) -> Any:
        parse: Callable[[object], Any] = getattr(self, f"_{self.name}")
        return parse(raw)

    def from_file(self, raw: object) -> Any:
        """A config-file value: typed YAML, so ``port: "8080"`` and ``enabled: "yes"`` are
        refused (text is for flags and the environment, where everything is text)."""
        typed = _YAML_TYPES.get(self.name)
        if typed is not None and isinstance(raw, str):
            raise ValueError(f"{self.describe()}, written without quotes")
        # bool is an int in Python: refuse true for a number, and 1 for a boolean.
        if typed is not None and (isinstance(raw, bool) is not (bool in typed)):
            raise ValueError(self.describe())
        return self.parse(raw)

    def describe(self) -> str:
        """The rule in words, for errors and docs: ``an integer >= 1``."""
        if self.name == "choice":
            return "one of " + ", ".join(self.choices)
        what = {"integer": "an integer", "number": "a number", "text": "a string"}.get(
            self.name, "a boolean (true or false)"
        )
        if self.minimum is not None:
            what += f" {'>' if self.exclusive_minimum else '>='} {self.minimum:g}"
        if self.maximum is not None:
            what += f" and <= {self.maximum}"
        return what

    def _integer(self, raw: object) -> int:
        if isinstance(raw, bool) or not isinstance(raw, int | str):
            raise ValueError(self.describe())
        try:
            value = int(raw.strip()) if isinstance(raw, str) else int(raw)
        except ValueError:
            raise ValueError(self.describe()) from None
        self._check_range(value)
        return value

    def _number(self, raw: object) -> float:
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            raise ValueError(self.describe())
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(self.describe()) from None
        if not math.isfinite(value):
            raise ValueError(self.describe())
        self._check_range(value)
        return value

    def _check_range(self, value: float) -> None:
        low = self.minimum
        if low is not None and (value < low or (self.exclusive_minimum and value == low)):
            raise ValueError(self.describe())
        if self.maximum is not None and value > self.maximum:
            raise ValueError(self.describe())

    def _text(self, raw: object) -> str:
        if not isinstance(raw, str) or not raw:
            raise ValueError("a non-empty string")
        return str(raw)

    def _boolean(self, raw: object) -> bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
            return raw.strip().lower() in _TRUE
        raise ValueError(self.describe())

    def _choice(self, raw: object) -> str:
        if isinstance(raw, str) and raw.lower() in self.choices:
            return raw.lower()
        raise ValueError(self.describe())


_YAML_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


@dataclass(frozen=True, slots=True)
class Option:
    """One option. ``field`` is a dotted path into ``ServerConfig`` (``limits.entry_ttl_ms``).

    The primary flag decides the other names: ``--shutdown-grace`` is read from
    ``MATCHMAKER_SHUTDOWN_GRACE`` and from the file key ``shutdown_grace`` (or
    ``shutdown-grace``). ``env_aliases`` are further accepted variables, and
    ``secret`` options are redacted wherever they are shown.
    """

    field: str
    flag: str
    kind: Kind
    default: Any
    group: str
    help: str
    flag_aliases: tuple[str, ...] = ()
    env_aliases: tuple[str, ...] = ()
    secret: bool = False
    default_text: str | None = None
    env_name: str | None = None

    @property
    def key(self) -> str:
        """The config-file key."""
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def env(self) -> str:
        """The primary environment variable."""
        return self.env_name or ENV_PREFIX + self.key.upper()

    @property
    def envs(self) -> tuple[str, ...]:
        """Every environment variable read, first wins."""
        return (self.env, *self.env_aliases)

    @property
    def param(self) -> str:
        """The Click parameter name."""
        return self.field.replace(".", "__")

    def shown_default(self) -> str:
        if self.default_text is not None:
            return self.default_text
        if self.default is None:
            return "(none)"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        return str(self.default)


_POSITIVE_INT = Kind("integer", minimum=1)
_POSITIVE_NUMBER = Kind("number", minimum=0, exclusive_minimum=True)
_PORT = Kind("integer", minimum=0, maximum=65535)
_TEXT = Kind("text")

LIMIT_HELP = {
    "max_frame_bytes": "Largest inbound WebSocket frame, in bytes.",
    "max_send_bytes": "Largest session.send payload (and public profile), in bytes.",
    "max_attributes": "Most attributes a client may declare (and keys in a filter).",
    "max_attribute_value_chars": "Longest attribute (and filter) string value.",
    "max_pools_per_client": "Pools one client may wait in at once.",
    "max_sessions_per_client": "Sessions one client may be a member of at once.",
    "max_session_members": "Largest session (and largest policy groupSize).",
    "outbound_queue": "Messages queued per connection before it is closed as slow.",
    "handshake_timeout_s": "Seconds a new connection has to send hello.",
    "entry_ttl_ms": "Milliseconds a pool entry waits before it expires.",
    "heartbeat_interval_ms": "Milliseconds between server pings.",
    "heartbeat_timeout_ms": "Milliseconds of silence before a connection is dropped.",
    "control_rate_per_s": "Sustained control messages per second per connection.",
    "control_burst": "Burst of control messages per connection.",
    "send_rate_per_s": "Sustained session.send messages per second per connection.",
    "send_burst": "Burst of session.send messages per connection.",
    "proposal_ttl_ms": "Default and longest life of a proposal, in milliseconds.",
    "max_open_proposals": "Open proposals one client may have made at once.",
    "max_pending_proposals": "Unanswered proposals one client may be named in at once.",
    "delegate_grace_ms": "Milliseconds a delegated-pool entry waits for a delegate "
    "before it is told pool.no_delegate.",
    "resume_grace_ms": "Milliseconds a dropped client may resume before it is removed.",
    "resume_buffer_bytes": "Bytes of recent events kept per client for replay on resume "
    "(events older than heartbeat_timeout_ms + resume_grace_ms are dropped too).",
    "rtc_peers_per_connection": "Server-side WebRTC peers (rtc.offer) one connection may open.",
    "max_party_members": "Most members of one party (a party never exceeds its pool's group).",
    "max_parties_per_client": "Parties one client may be a member of at once.",
    "max_parties_per_project": "Live parties one Project may have at once (on one process).",
    "max_policies_per_project": "Most policies one Project may declare.",
    "max_keys_per_project": "Most keys (client credentials) one Project may hold.",
    "max_body_bytes": "Largest /admin request body, in bytes.",
    "body_timeout_s": "Seconds an /admin request body may take to arrive (else 408).",
}


def _limit_options(prefix: str, fields: type[Any], group: str) -> list[Option]:
    options = []
    for spec in dataclasses.fields(fields):
        kind = _POSITIVE_NUMBER if isinstance(spec.default, float) else _POSITIVE_INT
        options.append(
            Option(
                f"{prefix}.{spec.name}",
                "--" + spec.name.replace("_", "-"),
                kind,
                spec.default,
                group,
                LIMIT_HELP[spec.name],
            )
        )
    return options


def _server_options() -> list[Option]:
    defaults = ServerConfig()
    network, store, process = NETWORK, STORE, PROCESS
    return [
        Option("host", "--host", _TEXT, defaults.host, network, "Address of the data plane."),
        Option("port", "--port", _PORT, defaults.port, network, "Data-plane port (0: any free)."),
        Option(
            "management_host",
            "--management-host",
            _TEXT,
            None,
            network,
            "Address of the control plane and the metrics port (never --host by default).",
            default_text="127.0.0.1 (loopback)",
        ),
        Option(
            "management_port",
            "--management-port",
            _PORT,
            defaults.management_port,
            network,
            "Control-plane port (0: any free).",
        ),
        Option(
            "metrics_port",
            "--metrics-port",
            _PORT,
            None,
            network,
            "Also serve /metrics here, without the management key (0: any free). Bind it "
            "where only the metrics collector reaches it.",
            default_text="off (/metrics only on the management port, behind the key)",
        ),
        Option(
            "no_playground",
            "--no-playground",
            Kind("boolean"),
            False,
            network,
            "Do not serve the browser playground at GET / on the data port.",
        ),
        Option(
            "management_key",
            "--management-key",
            _TEXT,
            None,
            store,
            "Key that /admin requires as 'Authorization: Bearer <key>'. Without one there is "
            "no control plane and every Project is implicit.",
            flag_aliases=("--mgmt-key",),
            env_aliases=("REALTIME_MGMT_KEY",),
            secret=True,
        ),
        Option(
            "store_url",
            "--store",
            _TEXT,
            None,
            store,
            "Project store: memory://, sqlite:///path.db or postgresql://...",
            default_text="sqlite:///matchmaker.db when a key is given",
        ),
        Option(
            "store_key_file",
            "--store-key-file",
            _TEXT,
            None,
            store,
            "File holding the store key (32 random bytes in base64: openssl rand -base64 32). "
            "Client secrets are sealed with it (AES-GCM) in the SQLite file or PostgreSQL "
            "table; a store sealed under another key is refused.",
            default_text="none (secrets stored in clear, with a warning)",
        ),
        Option(
            "require_declared_projects",
            "--require-declared-projects",
            Kind("boolean"),
            False,
            store,
            "Refuse clients whose Project was not declared through the control plane.",
        ),
        Option(
            "ice_servers",
            "--ice-servers",
            _TEXT,
            None,
            network,
            "Comma-separated STUN/TURN URLs that hello offers clients for WebRTC between "
            "session members (ice_servers in the reply).",
        ),
        Option(
            "cluster_url",
            "--cluster",
            _TEXT,
            None,
            process,
            "Redis URL (redis://host:port/db, or unix:///path/redis.sock?db=N on Redis's "
            "machine) of a cluster to join: several processes serve as one. Needs the "
            "'cluster' extra. Without it nothing touches Redis.",
            env_name="MATCHMAKER_CLUSTER",
            secret=True,
        ),
        Option(
            "cluster_name",
            "--cluster-name",
            _TEXT,
            defaults.cluster_name,
            process,
            "Name of the cluster: processes with the same Redis and name serve as one.",
        ),
        Option(
            "record_arrivals",
            "--record-arrivals",
            _TEXT,
            None,
            process,
            "Append each pool.enter of a declared policy to this file as an arrivals line "
            "for matchmaker simulate: the time, the policy and only the attributes its "
            "filter reads (no credential, player id or public data).",
            default_text="off",
        ),
        Option(
            "record_arrivals_max_bytes",
            "--record-arrivals-max-bytes",
            _POSITIVE_INT,
            defaults.record_arrivals_max_bytes,
            process,
            "Size past which the arrivals file is renamed FILE.1 (replacing the one "
            "before) and a new one begins.",
        ),
        *_limit_options("limits", Limits, DATA_LIMITS),
        *_limit_options("control", ControlLimits, CONTROL_LIMITS),
        Option(
            "server",
            "--server",
            Kind("choice", choices=SERVER_CHOICES),
            defaults.server,
            process,
            "Server of the data plane: picows (Cython WebSocket, from the 'fast' extra) or "
            "hypercorn (pure Python); auto is picows when installed. The control plane runs on "
            "hypercorn.",
        ),
        Option(
            "shutdown_grace_s",
            "--shutdown-grace",
            Kind("number", minimum=0),
            defaults.shutdown_grace_s,
            process,
            "Seconds open connections get to finish on SIGTERM/SIGINT.",
        ),
        Option(
            "log_level",
            "--log-level",
            Kind("choice", choices=("debug", "info", "warning", "error")),
            defaults.log_level,
            process,
            "Lowest level of log lines written to stderr.",
        ),
        Option(
            "log_format",
            "--log-format",
            Kind("choice", choices=LOG_FORMATS),
            defaults.log_format,
            process,
            "Log lines as json (one object per line) or text; auto is text on a terminal, "
            "json otherwise.",
        ),
    ]


OPTIONS: tuple[Option, ...] = tuple(_server_options())

CONFIG_OPTION = Option(
    "",
    "--config",
    _TEXT,
    None,
    PROCESS,
    "YAML file of settings (keys as the long flags); flags and environment override it.",
)
"""``--config`` / ``MATCHMAKER_CONFIG``: where the file is, so not a key inside it."""

ADMIN_OPTIONS: tuple[Option, ...] = (
    Option(
        "",
        "--url",
        _TEXT,
        "http://127.0.0.1:8081",
        "Admin",
        "Base URL of the management port (matchmaker admin).",
        env_name="MATCHMAKER_ADMIN_URL",
    ),
)
"""Settings of ``matchmaker admin``; its key is the server's ``MATCHMAKER_MANAGEMENT_KEY``."""

_BY_KEY = {option.key: option for option in OPTIONS}


def option_for_key(key: str) -> Option | None:
    """The option a config-file key names (``-`` and ``_`` are the same)."""
    return _BY_KEY.get(key.replace("-", "_"))
