"""The background event sender: a bounded queue drained by one worker thread.

``enqueue`` is the only call on the caller's path: a lock, a length check and
an append. It takes an event, or a pending record with an ``event()`` method
that the worker calls to build the event (a measured model call: reading its
request and response, pricing, redacting and stamping happen off the caller's
path). The worker wakes every ``flush_interval`` seconds or as soon as a
full batch is waiting, posts batches to ``POST /v1/events`` (at most
``batch_size`` events and ``MAX_BATCH_BYTES`` per request), retries failures
with backoff honouring ``Retry-After``, and finally spills the batch to the
offline file or drops it with a log line. Scores share the queue, the
batching, the retries and the spill file; records of type ``score`` are
posted to ``POST /v1/scores`` (without the type) instead.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, List, NamedTuple, Optional, Tuple

from ._backoff import Backoff
from ._http import HttpClient, Response, TransportError
from ._scores import SCORE
from ._spill import SpillFile

logger = logging.getLogger("expd")

MAX_BATCH_EVENTS = 1000
MAX_BATCH_BYTES = 1024 * 1024
_ENVELOPE_CLOSE = b"]}"
_RETRYABLE_STATUSES = frozenset((408, 425, 429, 500, 502, 503, 504))
_DROP_LOG_EVERY_SECONDS = 10.0


class Route(NamedTuple):
    """Where records of one kind go, and how one goes on the wire."""

    path: str
    noun: str
    envelope_open: bytes
    wire: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]]  # None: the record as queued


def _without_type(record: Dict[str, Any]) -> Dict[str, Any]:
    return {name: value for name, value in record.items() if name != "type"}


EVENTS = Route("/v1/events", "events", b'{"events":[', None)
SCORES = Route("/v1/scores", "scores", b'{"scores":[', _without_type)


class EventSender:
    """Queues events and delivers them from a worker thread; see the module doc."""

    def __init__(
        self,
        http: HttpClient,
        *,
        batch_size: int,
        flush_interval: float,
        max_queue_size: int,
        max_retries: int,
        backoff: Backoff,
        spill: Optional[SpillFile],
        on_config_version: Callable[[int], None],
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH_EVENTS:
            raise ValueError(f"batch_size must be within 1..{MAX_BATCH_EVENTS}, got {batch_size}")
        self._http = http
        self._batch_size = batch_size
        self._flush_interval = flush_interval
        self._max_queue_size = max_queue_size
        self._max_retries = max_retries
        self._backoff = backoff
        self._spill = spill
        self._on_config_version = on_config_version
        self._dropped = 0
        self._last_drop_log = 0.0
        self._closed = False
        self._server_failing = False
        # Only the first worker of a process replays; a forked child must not replay again.
        self._replay_due = spill is not None
        self._init_threading()

    def _init_threading(self) -> None:
        self._queue: Deque[Any] = deque()  # events, and pending records (module doc)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._deadline: Optional[float] = None
        self._thread: Optional[threading.Thread] = None

    @property
    def dropped(self) -> int:
        """Events dropped because the queue was full or delivery finally failed without a spill file."""
        return self._dropped

    def start(self) -> None:
        """Start the worker thread (idempotent)."""
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._run, name="expd-sender", daemon=True)
            self._thread.start()

    def enqueue(self, event: Any) -> bool:
        """Queue one event (or pending record) without blocking; False when the queue is full (counted, logged)."""
        with self._lock:
            if self._closed or len(self._queue) >= self._max_queue_size:
                self._dropped += 1
                dropped = True
            else:
                self._queue.append(event)
                dropped = False
                full = len(self._queue) >= self._batch_size
        if dropped:
            self._log_drop()
            return False
        # Event.set takes a lock even when already set: skip it then.
        if full and not self._wake.is_set():
            self._wake.set()
        return True

    def requeue(self, events: List[Dict[str, Any]]) -> None:
        """Queue replayed events ahead of new ones, beyond the bound: they were accepted once already."""
        with self._lock:
            self._queue.extendleft(reversed(events))
        self._wake.set()

    def flush(self, timeout: float) -> bool:
        """Ask the worker to send everything now; True if the queue emptied within ``timeout``."""
        deadline = time.monotonic() + timeout
        self._wake.set()
        with self._idle:
            while self._queue or self._in_flight:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._thread is None or not self._thread.is_alive():
                    return False
                self._idle.wait(remaining)
        return True

    def close(self, timeout: float) -> None:
        """Stop the worker: send what is queued within ``timeout``, spill (or drop) the rest."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._deadline = time.monotonic() + timeout
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if thread is None or not thread.is_alive():
            # No worker (never started, or it is gone): whatever is left goes to the spill file.
            self._give_up(self._take_all(), "client closed")

    def reset_after_fork(self) -> None:
        """In a forked child: forget the parent's queue and thread, start a fresh worker."""
        was_running = self._thread is not None
        self._replay_due = False
        self._init_threading()
        if self._spill is not None:
            self._spill.reset_after_fork()
        if was_running and not self._closed:
            self.start()

    def _run(self) -> None:
        self._replay_spilled()
        while not self._stop.is_set():
            self._wake.wait(self._flush_interval)
            self._wake.clear()
            self._drain()
        self._drain()

    def _replay_spilled(self) -> None:
        if not self._replay_due or self._spill is None:
            return
        self._replay_due = False
        events = self._spill.take_replayable()
        if events:
            logger.info("expd: replaying %d spilled events from %s", len(events), self._spill.path)
            self.requeue(events)

    def _drain(self) -> None:
        while True:
            with self._lock:
                batch = [self._queue.popleft() for _ in range(min(self._batch_size, len(self._queue)))]
                self._in_flight = len(batch)
            try:
                if not batch:
                    return
                self._deliver(self._built(batch))
            except Exception:  # noqa: BLE001 - the worker must survive any bug in one batch
                logger.exception("expd: unexpected error while sending %d events; dropped", len(batch))
                self._count_dropped(len(batch))
            finally:
                with self._idle:
                    self._in_flight = 0
                    self._idle.notify_all()

    def _deliver(self, batch: List[Dict[str, Any]]) -> None:
        scores = [record for record in batch if record.get("type") == SCORE]
        events = [record for record in batch if record.get("type") != SCORE] if scores else batch
        for route, records in ((EVENTS, events), (SCORES, scores)):
            if not records:
                continue
            bodies, oversized = _encode_batches(records, route)
            if oversized:
                logger.error("expd: %d %s larger than 1 MiB each; dropped", oversized, route.noun)
                self._count_dropped(oversized)
            for body, members in bodies:
                self._deliver_body(route, body, members)

    def _deliver_body(self, route: Route, body: bytes, events: List[Dict[str, Any]]) -> None:
        # While the server is known to be failing, each batch gets a single attempt, so
        # batches reach the spill file as fast as they arrive instead of overflowing the queue.
        retries = 0 if self._server_failing else self._max_retries
        attempt = 0
        while True:
            if self._past_deadline():
                self._give_up(events, "client closed before the batch could be sent")
                return
            failure, retry_after = self._post(route, body, events)
            if failure is None:
                self._server_failing = False
                return
            if attempt >= retries or self._stop.is_set():
                self._server_failing = True
                self._give_up(events, f"{attempt + 1} attempts failed, last: {failure}")
                return
            logger.debug("expd: sending %d %s failed (%s); retrying", len(events), route.noun, failure)
            delay = self._backoff.delay(attempt, retry_after)
            attempt += 1
            # close() cuts the wait short; the next failure then spills at once.
            self._stop.wait(delay)

    def _post(self, route: Route, body: bytes, events: List[Dict[str, Any]]) -> Tuple[Optional[str], Optional[float]]:
        """One attempt: (None, None) when done with the batch, else (why it failed, Retry-After)."""
        try:
            response = self._http.request("POST", route.path, body)
        except TransportError as exc:
            return str(exc), None
        if 200 <= response.status < 300:
            self._acknowledge(route, response, len(events))
            return None, None
        if response.status in _RETRYABLE_STATUSES:
            return response.problem(), response.retry_after()
        logger.error("expd: server refused %d %s, dropped: %s", len(events), route.noun, response.problem())
        self._count_dropped(len(events))
        return None, None

    def _acknowledge(self, route: Route, response: Response, count: int) -> None:
        ack = response.body if isinstance(response.body, dict) else {}
        rejected = ack.get("rejected") or []
        if rejected:
            # Refused for what they are (a bad field): sending them again cannot help.
            self._count_dropped(len(rejected))
            logger.warning(
                "expd: server rejected %d of %d %s, dropped (first: %s)", len(rejected), count, route.noun, rejected[0]
            )
        version = ack.get("config_version")
        if isinstance(version, int):
            self._on_config_version(version)

    def _past_deadline(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _take_all(self) -> List[Dict[str, Any]]:
        with self._lock:
            events = list(self._queue)
            self._queue.clear()
        return self._built(events)

    def _built(self, items: List[Any]) -> List[Dict[str, Any]]:
        """The queued items as events: each pending record built (a failing one dropped, counted, logged)."""
        events = []
        for item in items:
            if type(item) is not dict:
                try:
                    item = item.event()
                except Exception:  # noqa: BLE001 - one bad record must not lose the batch
                    logger.exception("expd: could not build a queued %s; dropped", type(item).__name__)
                    self._count_dropped(1)
                    continue
            events.append(item)
        return events

    def _give_up(self, events: List[Dict[str, Any]], reason: str) -> None:
        if not events:
            return
        if self._spill is not None and self._spill.append(events):
            logger.warning("expd: %s; spilled %d events to %s", reason, len(events), self._spill.path)
            return
        self._count_dropped(len(events))
        logger.error("expd: %s; dropped %d events (no spill file)", reason, len(events))

    def _count_dropped(self, count: int) -> None:
        with self._lock:
            self._dropped += count

    def _log_drop(self) -> None:
        now = time.monotonic()
        if now - self._last_drop_log >= _DROP_LOG_EVERY_SECONDS:
            self._last_drop_log = now
            logger.warning(
                "expd: event queue full (%d); %d events dropped so far", self._max_queue_size, self._dropped
            )


def _encode_batches(
    events: List[Dict[str, Any]], route: Route = EVENTS
) -> Tuple[List[Tuple[bytes, List[Dict[str, Any]]]], int]:
    """Split records into request bodies under MAX_BATCH_BYTES; also count records too big to send."""
    bodies: List[Tuple[bytes, List[Dict[str, Any]]]] = []
    parts: List[bytes] = []
    members: List[Dict[str, Any]] = []
    opening = route.envelope_open
    envelope = len(opening) + len(_ENVELOPE_CLOSE)
    size = envelope
    oversized = 0
    for event in events:
        wire = event if route.wire is None else route.wire(event)
        encoded = json.dumps(wire, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8")
        if len(encoded) + envelope > MAX_BATCH_BYTES:
            oversized += 1
            continue
        if parts and size + len(encoded) + 1 > MAX_BATCH_BYTES:
            bodies.append((opening + b",".join(parts) + _ENVELOPE_CLOSE, members))
            parts, members, size = [], [], envelope
        parts.append(encoded)
        members.append(event)
        size += len(encoded) + 1
    if parts:
        bodies.append((opening + b",".join(parts) + _ENVELOPE_CLOSE, members))
    return bodies, oversized
