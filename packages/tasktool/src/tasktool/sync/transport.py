"""HTTP for the sync sources: httpx with timeouts, bounded retries and rate limits.

:class:`Transport` sends one request and returns the decoded JSON and the
response, retrying what is worth retrying:

- connection errors, timeouts and 5xx answers: exponential backoff
  (``backoff * 2**attempt``, at most ``max_backoff``), up to ``attempts`` tries;
- rate limits: 429, and GitHub's 403 with ``X-RateLimit-Remaining: 0`` or a
  ``Retry-After``: wait what ``Retry-After`` (seconds) or ``X-RateLimit-Reset``
  (epoch seconds) asks, if that is at most ``max_wait``; a longer wait is a
  ``sync.rate_limited`` error saying when to come back.

Waiting goes through a :class:`Clock`, so tests pass one that records the
waits instead of sleeping. httpx exceptions are translated here into
``TaskToolError`` (``sync.*``); no message ever holds a credential, because
messages name the method and URL only and credentials travel in headers.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from tasktool.model.errors import TaskToolError

if TYPE_CHECKING:
    import httpx


class Clock(Protocol):
    """Wall-clock time and waiting (injectable so that tests never sleep)."""

    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class RetryPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """How hard to try: tries per request, backoff bounds, the longest rate-limit wait."""

    attempts: int = 5
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_wait: float = 120.0
    timeout: float = 30.0


def _http_date_or_seconds(value: str, now: float) -> float | None:
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return max(0.0, moment.timestamp() - now)


def rate_limit_wait(response: httpx.Response, now: float) -> float | None:
    """Seconds a rate-limited answer asks to wait, or ``None`` when it is no rate limit.

    429 always is one; 403 only with GitHub's signs (``Retry-After``, or
    ``X-RateLimit-Remaining: 0``), since a plain 403 means "not allowed".
    """
    headers = response.headers
    retry_after = headers.get("retry-after")
    exhausted = headers.get("x-ratelimit-remaining") == "0"
    if response.status_code == 429 or (
        response.status_code == 403 and (retry_after is not None or exhausted)
    ):
        if retry_after is not None:
            wait = _http_date_or_seconds(retry_after, now)
            if wait is not None:
                return wait
        reset = headers.get("x-ratelimit-reset")
        if reset is not None:
            try:
                return max(0.0, float(reset) - now)
            except ValueError:
                pass
        return 60.0  # GitHub's advice for a secondary limit without headers
    return None


class Transport:
    """One source's HTTP session: base headers (auth), retries, translated errors."""

    def __init__(
        self,
        *,
        source: str,
        headers: Mapping[str, str],
        auth: tuple[str, str] | None = None,
        policy: RetryPolicy | None = None,
        clock: Clock | None = None,
    ) -> None:
        import httpx

        self.source = source
        # Messages never hold a credential; this is the belt to those braces.
        self._secrets = [
            value.split(" ", 1)[-1]
            for key, value in headers.items()
            if key.lower() == "authorization"
        ] + ([auth[1]] if auth else [])
        self.policy = policy or RetryPolicy()
        self.clock = clock or SystemClock()
        self.retries = 0
        self._client = httpx.Client(
            headers=dict(headers),
            auth=auth,
            timeout=httpx.Timeout(self.policy.timeout),
            follow_redirects=True,  # httpx drops Authorization on a redirect to another host
        )

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def _error(self, code: str, message: str) -> TaskToolError:
        for secret in self._secrets:
            message = message.replace(secret, "***")
        return TaskToolError(f"sync source {self.source!r}: {message}", code=code)

    def _backoff(self, attempt: int) -> float:
        return float(min(self.policy.max_backoff, self.policy.backoff * 2**attempt))

    def request(
        self, method: str, url: str, *, params: Any = None, json: Any = None
    ) -> tuple[Any, httpx.Response]:
        """The JSON body of a 2xx answer and the response (for its headers)."""
        import httpx

        where = f"{method} {url.split('?', 1)[0]}"
        last = "no answer"
        for attempt in range(self.policy.attempts):
            if attempt:
                self.retries += 1
            try:
                response = self._client.request(method, url, params=params, json=json)
            except httpx.TransportError as exc:
                last = type(exc).__name__
                # Only network errors' texts are safe to show: a protocol error quotes the
                # offending header, which may be the Authorization header.
                if isinstance(exc, httpx.NetworkError | httpx.TimeoutException) and str(exc):
                    last += f": {exc}"
                self._wait(self._backoff(attempt), attempt)
                continue
            wait = rate_limit_wait(response, self.clock.now())
            if wait is not None:
                if wait > self.policy.max_wait:
                    raise self._error(
                        "sync.rate_limited",
                        f"{where}: rate limited for another {wait:.0f} s "
                        f"(more than the {self.policy.max_wait:.0f} s sync waits); try again later",
                    )
                last = f"HTTP {response.status_code} (rate limited)"
                self._wait(max(wait, self._backoff(0)), attempt)
                continue
            if response.status_code >= 500:
                last = f"HTTP {response.status_code}"
                self._wait(self._backoff(attempt), attempt)
                continue
            return self._decode(response, where), response
        raise self._error(
            "sync.unavailable",
            f"{where}: giving up after {self.policy.attempts} attempts (last: {last})",
        )

    def _wait(self, seconds: float, attempt: int) -> None:
        if attempt + 1 < self.policy.attempts:
            self.clock.sleep(seconds)

    def _decode(self, response: httpx.Response, where: str) -> Any:
        status = response.status_code
        if status in {401, 403}:
            raise self._error(
                "sync.auth",
                f"{where}: HTTP {status}; the credentials were refused "
                "(check the token and user variables and their permissions)",
            )
        if status == 404:
            raise self._error(
                "sync.not_found",
                f"{where}: HTTP 404; the project does not exist or the credentials cannot see it",
            )
        if not 200 <= status < 300:
            raise self._error("sync.http", f"{where}: unexpected HTTP {status}")
        try:
            return msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            raise self._error("sync.response", f"{where}: the answer is not JSON") from None


__all__ = ["Clock", "RetryPolicy", "SystemClock", "Transport", "rate_limit_wait"]
