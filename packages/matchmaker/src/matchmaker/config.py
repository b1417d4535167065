"""The one typed configuration of a matchmaker process.

Built by :mod:`matchmaker.configure` from flags, ``MATCHMAKER_*`` environment
variables (the key also from ``REALTIME_MGMT_KEY``) and a config file; tests
build it directly. Nothing here reads the environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SERVER_CHOICES = ("auto", "hypercorn", "picows")
"""Values of ``ServerConfig.server`` (see :mod:`matchmaker.servers`)."""

LOOPBACK = "127.0.0.1"
"""Where the control plane listens unless ``management_host`` names an address."""

LOG_FORMATS = ("auto", "json", "text")
"""Values of ``ServerConfig.log_format``: ``auto`` is text on a terminal, JSON lines otherwise."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Data-plane limits; every one has a CLI flag."""

    max_frame_bytes: int = 64 * 1024
    max_send_bytes: int = 16 * 1024
    max_attributes: int = 32
    max_attribute_value_chars: int = 256
    max_pools_per_client: int = 3
    max_sessions_per_client: int = 8
    max_session_members: int = 64
    outbound_queue: int = 1024
    handshake_timeout_s: float = 10.0
    entry_ttl_ms: int = 10 * 60 * 1000
    # Realtime defaults (docs/operations.md, "Tuning for realtime games"): a half-open
    # connection is dropped 15 s after its last frame, half the grace before it ends.
    heartbeat_interval_ms: int = 5_000
    heartbeat_timeout_ms: int = 15_000
    control_rate_per_s: float = 50.0
    control_burst: int = 100
    send_rate_per_s: float = 500.0
    send_burst: int = 1000
    proposal_ttl_ms: int = 30_000
    max_open_proposals: int = 4
    max_pending_proposals: int = 16
    delegate_grace_ms: int = 5_000
    resume_grace_ms: int = 30_000
    resume_buffer_bytes: int = 256 * 1024
    rtc_peers_per_connection: int = 1


@dataclass(frozen=True, slots=True)
class ControlLimits:
    """Control-plane limits: what one Project may hold and how requests are read."""

    max_policies_per_project: int = 256
    max_keys_per_project: int = 64
    max_body_bytes: int = 1024 * 1024
    body_timeout_s: float = 10.0


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything one matchmaker process needs to start.

    ``management_key`` ``None`` means zero-config: no control plane, no
    management port, every Project implicit. ``store_url`` ``None`` means the
    default store: ``sqlite:///matchmaker.db`` in the working directory when a
    key is given, else nothing is stored. ``store_key_file`` names the file of
    the key that seals client secrets at rest (``None``: stored in clear, with a
    warning at startup). ``server`` names the data plane's server: ``auto``
    (picows when installed, else hypercorn), ``hypercorn`` or ``picows``
    (:mod:`matchmaker.servers`). ``metrics_port`` ``None``
    serves ``/metrics`` only on the management port, behind the key; a port
    serves it there too, without the key. ``management_host`` ``None`` is
    loopback (``LOOPBACK``), whatever ``host`` is: the control plane (and the
    metrics port) listen on another interface only when named. ``no_playground`` turns off the
    browser playground at ``GET /`` on the data port.
    """

    host: str = "127.0.0.1"
    port: int = 8080
    management_host: str | None = None
    management_port: int = 8081
    management_key: str | None = field(default=None, repr=False)
    store_url: str | None = None
    store_key_file: str | None = None
    require_declared_projects: bool = False
    limits: Limits = field(default_factory=Limits)
    control: ControlLimits = field(default_factory=ControlLimits)
    shutdown_grace_s: float = 5.0
    log_level: str = "info"
    log_format: str = "auto"
    ice_servers: str | None = None  # comma-separated STUN/TURN URLs for the hello reply
    server: str = "auto"
    metrics_port: int | None = None
    no_playground: bool = False
    cluster_url: str | None = field(default=None, repr=False)
    cluster_name: str = "matchmaker"
    record_arrivals: str | None = None
    record_arrivals_max_bytes: int = 64 * 1024 * 1024
