"""An HTTP client for SEC EDGAR that keeps the SEC's fair-access rules.

Every request carries the declared User-Agent, waits its turn on a rate limiter (at most
``requests_per_second``, 10 by the SEC's rule), and is tried again after a 429, a 5xx, a
timeout or a connection cut mid-answer, waiting 1, 2, 4... s (or what Retry-After asks).
A connection that cannot be opened at all fails at once: offline, fetch says so and stops.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from finrag.config import FetchSettings
from finrag.errors import ConfigError, FinragError, ServiceUnavailable

_CONTACT = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")
_BACKOFF_S = 1.0
_MAX_WAIT_S = 60.0  # a longer Retry-After is cut to this: the next try may fail again


class EdgarRefused(FinragError):
    """EDGAR answered 4xx for one URL (a document that is not there): that filing fails,
    the others go on."""

    def __init__(self, message: str, *, status: int, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status


def user_agent(settings: FetchSettings) -> str:
    """The declared User-Agent; a ConfigError when it is unset or names no contact."""
    value = (settings.user_agent or "").strip()
    if not value:
        raise ConfigError(
            "fetch needs to tell the SEC who you are: fetch.user_agent is not set",
            hint="set it once, with a contact e-mail, in config.toml ([fetch] user_agent = "
            '"Jane Doe jane@example.com") or as FINRAG_FETCH__USER_AGENT; the SEC refuses '
            "requests without one",
        )
    if not _CONTACT.search(value):
        raise ConfigError(
            f"fetch.user_agent {value!r} holds no contact e-mail",
            hint="the SEC asks for a name and an e-mail address: set fetch.user_agent (in "
            'config.toml, or FINRAG_FETCH__USER_AGENT) to e.g. "Jane Doe jane@example.com"',
        )
    return value


class RateLimiter:
    """At most ``per_second`` starts a second: each waits until 1/per_second after the one
    before. The clock and the sleep are injectable, so tests check the spacing without
    waiting."""

    def __init__(
        self,
        per_second: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.interval = 1.0 / per_second
        self.clock = clock
        self.sleep = sleep
        self._next: float | None = None

    def wait(self) -> None:
        now = self.clock()
        if self._next is not None and now < self._next:
            self.sleep(self._next - now)
            now = max(self.clock(), self._next)
        self._next = now + self.interval


class EdgarClient:
    """GET JSON and documents from EDGAR; one client per run, so one limiter for all."""

    def __init__(
        self,
        settings: FetchSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.retries = settings.retries
        self.sleep = sleep
        self.limiter = RateLimiter(settings.requests_per_second, clock=clock, sleep=sleep)
        self.requests = 0
        self.http = httpx.Client(
            headers={"User-Agent": user_agent(settings)},
            timeout=httpx.Timeout(settings.timeout_s, connect=min(settings.timeout_s, 10.0)),
            transport=transport,
            follow_redirects=True,
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> EdgarClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_json(self, url: str) -> Any:
        def parse(response: httpx.Response) -> Any:
            body = response.read()
            try:
                return json.loads(body)
            except ValueError:
                raise ServiceUnavailable(
                    f"{url} answered with something that is not JSON ({body[:60]!r})",
                    hint="a proxy or captive portal may stand between you and the SEC; "
                    "check fetch.sec_url and fetch.data_url",
                ) from None

        return self._get(url, parse)

    def download(self, url: str, target: Path) -> int:
        """``url``'s body into ``target``, whole or not at all: written to a hidden file
        beside it (ingest skips dotfiles) and renamed once complete. Returns its size."""
        # The process id in the name: two runs at once never write into one file.
        part = target.with_name(f".{target.name}.{os.getpid()}.part")

        def write(response: httpx.Response) -> int:
            with part.open("wb") as out:  # a retry starts the file again
                for block in response.iter_bytes():
                    out.write(block)
                out.flush()
                os.fsync(out.fileno())  # on disk before the rename says it is whole
            return part.stat().st_size

        try:
            size = self._get(url, write)
            part.replace(target)
            return size
        finally:  # an error, Ctrl-C or SIGTERM mid-body: no partial file is left
            part.unlink(missing_ok=True)

    def _get(self, url: str, consume: Callable[[httpx.Response], Any]) -> Any:
        host = urlsplit(url).netloc
        for attempt in range(self.retries + 1):
            self.limiter.wait()
            self.requests += 1
            wait: float | None = None
            try:
                with self.http.stream("GET", url) as response:
                    status = response.status_code
                    if status == 429 or status >= 500:
                        problem = f"HTTP {status}"
                        wait = _retry_after(response)
                    elif status >= 400:
                        raise _refusal(url, status)
                    else:
                        return consume(response)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                raise ServiceUnavailable(
                    f"cannot reach {host}: {_reason(exc)}",
                    hint="fetch needs a connection to the SEC: check the network (or a proxy "
                    "in HTTPS_PROXY); no partial file is left, and filings fetched before stay",
                ) from None
            except (httpx.TimeoutException, httpx.ReadError, httpx.RemoteProtocolError) as exc:
                problem = _reason(exc)
            if attempt < self.retries:
                self.sleep(wait if wait is not None else _BACKOFF_S * 2**attempt)
        raise ServiceUnavailable(
            f"{host} kept failing: {problem} for {url}, {self.retries + 1} tries",
            hint="the SEC may be busy or down: run the same command later; what was fetched "
            "is kept and is not fetched again",
        )


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    return min(float(value), _MAX_WAIT_S) if value.isdigit() else None


def _refusal(url: str, status: int) -> FinragError:
    if status in (401, 403):
        # The SEC answers 403 to requests without a declared User-Agent, or over its limit.
        return ServiceUnavailable(
            f"the SEC refused the request (HTTP {status}) for {url}",
            hint="check that fetch.user_agent names you and a contact e-mail; if it does, "
            "the SEC may have blocked this address for a while after too many requests",
        )
    return EdgarRefused(f"HTTP {status} for {url}", status=status)


def _reason(exc: Exception) -> str:
    return str(exc) or type(exc).__name__
