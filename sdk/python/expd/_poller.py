"""Keeps the org config fresh: a first fetch at start, then ETag polling.

The poller thread fetches ``GET /v1/config`` at once, then every
``interval`` seconds with ``If-None-Match`` (a 304 keeps the cache). A
newer ``config_version`` seen elsewhere (an ingest ack) wakes it early.
Failures are logged and retried with backoff; the last good config stays.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Iterable, Optional

from ._backoff import Backoff
from ._config import ConfigError, ConfigSnapshot
from ._http import HttpClient, TransportError

logger = logging.getLogger("expd")

# A server that keeps reporting a newer version than it serves must not make us hammer it.
_MIN_SECONDS_BETWEEN_FORCED_FETCHES = 1.0


class ConfigPoller:
    """Owns the current ConfigSnapshot and the thread that refreshes it."""

    def __init__(
        self,
        http: HttpClient,
        interval: float,
        backoff: Backoff,
        expected: Iterable[str] = (),
    ) -> None:
        self._http = http
        self._interval = interval
        self._backoff = backoff
        self._expected = tuple(expected)
        self.snapshot: Optional[ConfigSnapshot] = None
        self._closed = False
        self._init_threading()

    def _init_threading(self) -> None:
        self.loaded = threading.Event()
        if self.snapshot is not None:
            self.loaded.set()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        """Start the polling thread (idempotent)."""
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._run, name="expd-config", daemon=True)
            self._thread.start()

    def wait_loaded(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds for the first config; True once one is loaded."""
        return self.loaded.wait(timeout)

    def notice_version(self, version: int) -> None:
        """Refresh soon if the server reports a config newer than ours."""
        current = self.snapshot
        if current is None or version > current.version:
            self._wake.set()

    def close(self) -> None:
        """Stop polling; the thread exits at its next wake-up."""
        self._closed = True
        self._stop.set()
        self._wake.set()

    def reset_after_fork(self) -> None:
        """In a forked child: keep the config, replace the thread and its events."""
        was_running = self._thread is not None
        self._init_threading()
        if was_running and not self._closed:
            self.start()

    def fetch(self) -> Optional[float]:
        """Fetch once. Return None on success, else the server's Retry-After (or 0.0 if none)."""
        current = self.snapshot
        headers = {"If-None-Match": current.etag} if current is not None and current.etag else {}
        try:
            response = self._http.request("GET", "/v1/config", headers=headers)
        except TransportError as exc:
            logger.warning("expd: config fetch failed: %s", exc)
            return 0.0
        if response.status == 304 and current is not None:
            return None
        if response.status != 200:
            logger.warning("expd: config fetch failed: %s", response.problem())
            retry_after = response.retry_after()
            return 0.0 if retry_after is None else retry_after
        try:
            snapshot = ConfigSnapshot.parse(response.body or {}, response.header("ETag"))
        except ConfigError as exc:
            logger.error("expd: config from the server is malformed, keeping the last one: %s", exc)
            return 0.0
        self._install(snapshot, current)
        return None

    def _install(self, snapshot: ConfigSnapshot, previous: Optional[ConfigSnapshot]) -> None:
        if previous is not None and snapshot.version < previous.version:
            # A lagging replica may serve an older version; never move backwards.
            return
        self.snapshot = snapshot
        self.loaded.set()
        if previous is None or previous.version != snapshot.version:
            logger.info("expd: config version %d loaded", snapshot.version)
            missing = [name for name in self._expected if name not in snapshot]
            if missing:
                logger.warning("expd: experiments not running in config %d: %s", snapshot.version, missing)

    def _run(self) -> None:
        failures = 0
        last_fetch = float("-inf")
        min_gap = min(_MIN_SECONDS_BETWEEN_FORCED_FETCHES, self._interval)
        while not self._stop.is_set():
            gap = time.monotonic() - last_fetch
            if gap < min_gap and self._stop.wait(min_gap - gap):
                return
            last_fetch = time.monotonic()
            try:
                retry_after = self.fetch()
            except Exception:  # noqa: BLE001 - polling must outlive any single bad answer
                logger.exception("expd: unexpected error while fetching the config")
                retry_after = 0.0
            if retry_after is None:
                failures = 0
                delay = self._interval
            else:
                delay = self._backoff.delay(failures, retry_after or None)
                failures += 1
            self._wake.wait(delay)
            self._wake.clear()
