"""The ``Client``: local assignment, prompt and variable lookups, event tracking."""

from __future__ import annotations

import asyncio
import logging
import os
from datetime import datetime
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple, Union

from . import _baggage, _lifecycle
from ._backoff import Backoff
from ._config import Experiment
from ._decision import Decision
from ._events import BUSINESS_EVENT, EVENT_TYPES, EXPOSURE, MODEL_CALL, bound_model_call_text, new_event
from ._exposures import EXPOSE_ALWAYS, EXPOSE_DAILY, EXPOSE_NONE, ExposureLog
from ._http import HttpClient
from ._model_call import ModelCall
from ._poller import ConfigPoller
from ._prices import PriceTable
from ._redact import REDACTED_FIELDS, redactor
from ._scores import InvalidScore, new_score
from ._sender import EventSender
from ._spill import SpillFile
from ._user import bound_user, current_attributes, last_call_id
from ._wrap import WrappedProvider

logger = logging.getLogger("expd")

DEFAULT_BASE_URL = "https://api.expd.dev"
# Unknown experiment names are warned about once each; past this many, silently.
_MAX_REMEMBERED_UNKNOWN = 1000
API_KEY_ENV = "SERVICE_API_KEY"
BASE_URL_ENV = "SERVICE_BASE_URL"


class MissingApiKeyError(ValueError):
    """Raised by ``Client()`` when neither ``api_key`` nor ``SERVICE_API_KEY`` is set."""


class Client:
    """An expd client: assigns locally from a polled config and sends events in the background.

    Nothing on the caller's path does network I/O or raises because the
    service misbehaves: ``assign`` and the prompt and variable helpers read
    memory, ``track`` and ``score`` only enqueue. Two daemon threads do the
    rest: one polls ``GET /v1/config`` (at start, then every ``poll_interval``
    seconds with ETag/304, and at once when the server reports a newer
    ``config_version``), one sends events to ``POST /v1/events`` and scores
    to ``POST /v1/scores``.

    Args:
        api_key: publishable (``pk_...``) or secret (``sk_...``) key; default ``$SERVICE_API_KEY``.
        base_url: default ``$SERVICE_BASE_URL``, else ``https://api.expd.dev``.
        experiments: names or ids the application uses; a warning is logged
            when a loaded config does not run one of them.
        wait_for_config: seconds the constructor waits for the first config
            (0: return at once; ``assign`` answers None until it loads).
        poll_interval: seconds between config polls.
        flush_interval: seconds between event flushes (a full batch flushes at once).
        batch_size: events per request, at most 1,000 (requests also stay under 1 MiB).
        max_queue_size: queued events beyond which ``track`` drops (counted in ``dropped_events``).
        max_retries: retries of one batch after its first attempt, with exponential backoff
            (``retry_backoff`` seconds doubling up to ``max_backoff``, or the server's Retry-After).
        request_timeout: seconds for one HTTP request.
        spill_path: JSON-lines file for batches that could not be sent; replayed on the next
            start if not older than 24 hours. None: such batches are dropped with a log line.
        exposure_cache_size: (experiment, user) pairs remembered (variant and day of the last exposure) to
                send one exposure per UTC day and assign repeat users without hashing.
        close_timeout: seconds ``close()`` (and the exit hook) waits to send what is queued.
        capture_text: record prompt and response text in ``model_call`` events.
        model_prices: USD per token by model name, ``{"my-model": {"input": 1e-6, "output": 2e-6}}``
            (or ``(input, output)`` pairs), over the shipped table; measured calls without an explicit
            ``cost_usd`` record the cost of their usage at these prices.
        redact: ``True`` replaces emails, phone numbers, card numbers, IBANs, IP addresses and
            API keys or tokens in every ``model_call``'s prompt, response and error by typed placeholders
            (``[EMAIL]``, ...) before the event is queued; a function ``str -> str`` does that and
            then runs on the result (it can remove more, never less; if it raises, the text is sent
            as ``[REDACTED]``). Off by default: off costs nothing.
        redact_patterns: custom ``{"name", "regex", "placeholder"}`` patterns, as ``GET /v1/privacy``
            lists them, applied before the built-in detectors (they turn redaction on).
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        experiments: Optional[Iterable[str]] = None,
        *,
        wait_for_config: float = 0.0,
        poll_interval: float = 60.0,
        flush_interval: float = 1.0,
        batch_size: int = 500,
        max_queue_size: int = 10_000,
        max_retries: int = 5,
        retry_backoff: float = 0.5,
        max_backoff: float = 30.0,
        request_timeout: float = 10.0,
        spill_path: Optional[str] = None,
        exposure_cache_size: int = 100_000,
        close_timeout: float = 5.0,
        capture_text: bool = True,
        model_prices: Optional[Mapping[str, Any]] = None,
        redact: Any = False,
        redact_patterns: Optional[Iterable[Mapping[str, Any]]] = None,
    ) -> None:
        key = api_key or os.environ.get(API_KEY_ENV)
        if not key:
            raise MissingApiKeyError(f"expd: pass api_key= or set {API_KEY_ENV}")
        self.base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        self.capture_text = capture_text
        self.close_timeout = close_timeout
        self._closed = False
        self._unknown_experiments: set = set()
        self._prices = PriceTable(model_prices)
        self._redact = redactor(redact, redact_patterns)
        # Publishable keys: expd_pk_..., or pk_... issued before the expd_ prefixes.
        self._publishable = key.startswith(("expd_pk_", "pk_"))
        http = HttpClient(self.base_url, key, request_timeout)
        self._exposures = ExposureLog(exposure_cache_size)
        self._poller = ConfigPoller(http, poll_interval, Backoff(1.0, poll_interval), expected=experiments or ())
        self._sender = EventSender(
            http,
            batch_size=batch_size,
            flush_interval=flush_interval,
            max_queue_size=max_queue_size,
            max_retries=max_retries,
            backoff=Backoff(retry_backoff, max_backoff),
            spill=SpillFile(spill_path) if spill_path else None,
            on_config_version=self._poller.notice_version,
        )
        _lifecycle.register(self)
        self._poller.start()
        self._sender.start()
        if wait_for_config > 0 and not self._poller.wait_loaded(wait_for_config):
            logger.warning("expd: no config after %.1fs; assign() answers None until one loads", wait_for_config)

    # --- state -------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """True once a config has loaded."""
        return self._poller.snapshot is not None

    @property
    def config_version(self) -> Optional[int]:
        """The loaded config's version, or None before the first load."""
        snapshot = self._poller.snapshot
        return None if snapshot is None else snapshot.version

    @property
    def dropped_events(self) -> int:
        """Events lost: queue full, refused by the server, or undeliverable without a spill file.

        Refused covers a batch answered with an error status and single events in an
        ack's ``rejected`` list.
        """
        return self._sender.dropped

    def wait_until_ready(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds for the first config; True if one is loaded."""
        return self._poller.wait_loaded(timeout)

    # --- assignment ----------------------------------------------------------

    def assign(self, experiment: str, user_id: str, attributes: Optional[Mapping[str, Any]] = None) -> Optional[str]:
        """The user's variant by local bucketing; None until the config loads (treat as control).

        ``experiment`` is a name or an id. The first call per (experiment,
        user, variant, UTC day) in this process also queues an exposure event.
        ``attributes`` (JSON values; default: those bound by ``as_user`` for
        this user) are what the experiment's targeting condition reads: a
        user who does not match gets control, outside the experiment, with
        no exposure (docs/targeting.md).
        """
        decision = self._decide(experiment, user_id, EXPOSE_DAILY, attributes)
        return None if decision is None else decision.variant

    def assign_detail(self, experiment: str, user_id: str,
                      attributes: Optional[Mapping[str, Any]] = None) -> Optional[Decision]:
        """``assign`` with the whole decision, as ``POST /v1/assign`` answers it; None until the config loads.

        ``Decision(variant, in_experiment, reason_code)``: ``in_experiment``
        says whether the user counts in the experiment's analysis;
        ``reason_code`` is ``"not_running"`` (draft, scheduled or stopped:
        control for everyone), ``"shipped"`` (the shipped variant for
        everyone), ``"not_targeted"`` (the attributes do not match the
        targeting: control, outside the experiment), ``"pinned"`` (the
        sticky filters keep the user on the variant they were first
        assigned) or ``"bucketed"`` (the bucket map's variant);
        ``"holdout"`` and ``"layer"`` are reserved. Queues the same exposure
        as ``assign``.
        """
        return self._decide(experiment, user_id, EXPOSE_DAILY, attributes)

    def _decide_call(self, experiment: str, user_id: str) -> Optional[Decision]:
        """For a measured model call: the decision, with an exposure queued for this call."""
        return self._decide(experiment, user_id, EXPOSE_ALWAYS)

    def _decide(self, experiment: str, user_id: str, mode: int,
                attributes: Optional[Mapping[str, Any]] = None) -> Optional[Decision]:
        """The decision; queues the exposure ``mode`` owes: always (a model call) or once per UTC day (assign)."""
        try:
            found = self._experiment(experiment)
            if found is None:
                return None
            user_id = user_id if type(user_id) is str else str(user_id)
            if attributes is None:
                attributes = current_attributes(user_id)
            # A model call's exposure also counts as the day's, so assign() adds none after it.
            decision, due = self._exposures.resolve(found, user_id, mode, attributes=attributes)
            if due:
                self._sender.enqueue(new_event(EXPOSURE, {
                    "experiment_id": found.id,
                    "user_id": user_id,
                    "variant": decision.variant,
                    "config_version": self.config_version,
                }))
            if mode != EXPOSE_NONE:
                # The user's side of each holdout whose step this decision evaluated, held out or not.
                for holdout_id, variant in self._exposures.holdouts_due(found, user_id):
                    self._sender.enqueue(new_event(EXPOSURE, {
                        "experiment_id": holdout_id,
                        "user_id": user_id,
                        "variant": variant,
                        "config_version": self.config_version,
                    }))
            return decision
        except Exception:  # noqa: BLE001 - assignment must never break the caller
            logger.exception("expd: assign(%r) failed; answering None", experiment)
            return None

    def get_prompt(self, experiment: str, user_id: str, default: str,
                   attributes: Optional[Mapping[str, Any]] = None) -> Tuple[Optional[str], str, bool]:
        """``(variant, prompt, fallback)``: the variant's prompt, or ``default`` with ``fallback=True``.

        The default is used when the config is not loaded, the experiment
        is unknown, or the variant has no prompt. Memory only, no network.
        ``attributes`` as for ``assign``.
        """
        variant = self.assign(experiment, user_id, attributes)
        found = self._experiment(experiment) if variant is not None else None
        prompt = found.prompt_of(variant) if found is not None and variant is not None else None
        if prompt is None:
            return variant, default, True
        return variant, prompt, False

    def get_variables(
        self, experiment: str, user_id: str, defaults: Optional[Mapping[str, Any]] = None,
        attributes: Optional[Mapping[str, Any]] = None,
    ) -> Dict[str, Any]:
        """The variant's custom variables merged over ``defaults`` (a new dict). Memory only.

        ``attributes`` as for ``assign``."""
        merged = dict(defaults or {})
        variant = self.assign(experiment, user_id, attributes)
        found = self._experiment(experiment) if variant is not None else None
        if found is not None and variant is not None:
            merged.update(found.variables_of(variant))
        return merged

    # --- events --------------------------------------------------------------

    def track(self, event: str, payload: Mapping[str, Any]) -> bool:
        """Queue one event; never blocks, never raises. False if it was dropped.

        ``event`` is a type (``"exposure"``, ``"model_call"``,
        ``"business_event"``) and ``payload`` its wire fields
        (``experiment_id`` as name or id, ``user_id``, ...). Any other
        ``event`` is a business metric name: ``track("purchase", {...,
        "value": 9.5})`` sends a ``business_event`` with
        ``business_metric="purchase"``. ``event_id`` and ``timestamp`` are
        filled in unless the payload has them; a missing ``variant`` is
        filled from local assignment when the config allows.
        """
        try:
            fields = dict(payload)
            if event not in EVENT_TYPES:
                fields.setdefault("business_metric", event)
                event = BUSINESS_EVENT
            return self._record(event, fields)
        except Exception:  # noqa: BLE001 - tracking must never break the caller
            logger.exception("expd: track(%r) failed; event dropped", event)
            return False

    def track_business(
        self, experiment: str, user_id: str, metric: str, value: float = 1.0, variant: Optional[str] = None
    ) -> bool:
        """Queue a ``business_event`` (e.g. ``conversion``, ``revenue``) for one user."""
        fields: Dict[str, Any] = {"experiment_id": experiment, "user_id": user_id, "business_metric": metric,
                                  "value": value}
        if variant is not None:
            fields["variant"] = variant
        return self.track(BUSINESS_EVENT, fields)

    def score(
        self,
        call_id: Optional[str],
        name: str,
        value: Union[float, bool],
        *,
        source: str = "human",
        comment: Optional[str] = None,
        evaluator: Optional[str] = None,
        evaluator_version: Optional[str] = None,
        judge_model: Optional[str] = None,
        timestamp: Union[None, float, str, datetime] = None,
    ) -> bool:
        """Queue a score of one model call; never blocks, never raises. False if it was dropped.

        ``call_id`` is the call's id (``last_call_id`` inside ``as_user``, or
        ``ModelCall.call_id``); ``name`` follows the rules of business
        metric names; ``value`` is a finite number (booleans count 1 and 0).
        ``source`` is ``human`` (default), ``judge`` or ``code`` (the last two
        need a secret key; ``judge_model`` goes with ``judge`` only).
        ``timestamp`` (default now; a datetime, Unix seconds or RFC 3339
        text) must be within 24 hours back and 5 minutes ahead.
        ``comment`` is cut to 4 KiB. A later score of
        the same call, name and source replaces the earlier one on the
        server. Invalid input (no call id, NaN, an unknown source...) is
        dropped with a log line. Sent with events, to ``POST /v1/scores``.
        """
        try:
            record = new_score(
                call_id, name, value, source=source, comment=comment, evaluator=evaluator,
                evaluator_version=evaluator_version, judge_model=judge_model, timestamp=timestamp,
            )
            if self._publishable and source != "human":
                # The server refuses the whole batch for it (403): drop this score only.
                raise InvalidScore(f"source {source!r} needs a secret key; a publishable key sends 'human' only")
        except InvalidScore as exc:
            logger.warning("expd: score(%r, %r) dropped: %s", call_id, name, exc)
            return False
        except Exception:  # noqa: BLE001 - scoring must never break the caller
            logger.exception("expd: score(%r, %r) failed; dropped", call_id, name)
            return False
        return self._sender.enqueue(record)

    def flush(self, timeout: float = 5.0) -> bool:
        """Block up to ``timeout`` seconds until queued events are sent; True if all were."""
        return self._sender.flush(timeout)

    # --- model calls -----------------------------------------------------------

    def as_user(self, user_id: str, attributes: Optional[Mapping[str, Any]] = None,
                experiment: Optional[str] = None):
        """``with client.as_user(user_id, attributes):`` binds the user (and the attributes targeting
        reads) for wrapped calls and assignments of that user in this thread or task.

        Where the application has the OpenTelemetry API, the block also runs
        with W3C baggage ``expd.user`` and, when ``experiment`` names an
        experiment the user is in, ``expd.experiment`` and ``expd.variant``
        (decided without an exposure), so GenAI spans reach ``POST /v1/traces``
        attributed (docs/ingest.md, "OTLP traces").
        """
        user_id = user_id if type(user_id) is str else str(user_id)
        baggage = [(_baggage.USER, user_id)]
        found = self._experiment(experiment) if experiment is not None and _baggage.available() else None
        if found is not None:
            decision = found.decide(user_id, attributes)
            if decision is not None and decision.in_experiment:
                baggage += [(_baggage.EXPERIMENT, experiment), (_baggage.VARIANT, decision.variant)]
        return bound_user(user_id, attributes, baggage)

    @property
    def last_call_id(self) -> Optional[str]:
        """Inside ``as_user``: the id of the last model call measured in the block (None before one).

        It is the ``event_id`` of that call's ``model_call``, set when the
        call starts (a stream's id is known before its first chunk): pass
        it to ``score`` or to the browser for feedback. Calls made by tasks
        spawned inside the block count too.
        """
        return last_call_id()

    def wrap(self, provider_client: Any, experiment: str) -> WrappedProvider:
        """A proxy of an OpenAI-style client whose model calls are measured and recorded.

        Calls made inside ``as_user`` record an exposure and a
        ``model_call`` event (nothing for a user outside the experiment:
        not targeted; their calls must not enter its analysis) (latency, time to first token for streams,
        model, tokens, cost from ``model_prices`` and the shipped table,
        error); results, streams and exceptions reach the caller unchanged.
        ``last_call_id`` names the call for ``score``.
        """
        return WrappedProvider(provider_client, self, experiment)

    def intercept_model_call(
        self,
        experiment: str,
        user_id: str,
        model: Optional[str] = None,
        prompt: Optional[str] = None,
        price: Any = None,
    ) -> ModelCall:
        """Context manager (sync or async) measuring one model call to any provider; see ``ModelCall``.

        ``price`` (``{"input", "output"}`` USD per token, or a pair) prices this call alone.
        """
        return ModelCall(self, experiment, user_id, model=model, prompt=prompt, price=price)

    # --- async forms (memory and enqueue only: they never block the loop) ------

    async def aassign(self, experiment: str, user_id: str,
                      attributes: Optional[Mapping[str, Any]] = None) -> Optional[str]:
        """Async form of ``assign``."""
        return self.assign(experiment, user_id, attributes)

    async def aassign_detail(self, experiment: str, user_id: str,
                             attributes: Optional[Mapping[str, Any]] = None) -> Optional[Decision]:
        """Async form of ``assign_detail``."""
        return self.assign_detail(experiment, user_id, attributes)

    async def aget_prompt(self, experiment: str, user_id: str, default: str,
                          attributes: Optional[Mapping[str, Any]] = None) -> Tuple[Optional[str], str, bool]:
        """Async form of ``get_prompt``."""
        return self.get_prompt(experiment, user_id, default, attributes)

    async def aget_variables(
        self, experiment: str, user_id: str, defaults: Optional[Mapping[str, Any]] = None,
        attributes: Optional[Mapping[str, Any]] = None,
    ) -> Dict[str, Any]:
        """Async form of ``get_variables``."""
        return self.get_variables(experiment, user_id, defaults, attributes)

    async def atrack(self, event: str, payload: Mapping[str, Any]) -> bool:
        """Async form of ``track``."""
        return self.track(event, payload)

    async def ascore(
        self,
        call_id: Optional[str],
        name: str,
        value: Union[float, bool],
        **details: Any,
    ) -> bool:
        """Async form of ``score`` (same keyword arguments)."""
        return self.score(call_id, name, value, **details)

    async def await_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the first config without blocking the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self._poller.wait_loaded, timeout)

    # --- lifecycle ---------------------------------------------------------------

    def close(self, timeout: Optional[float] = None) -> None:
        """Stop polling and send what is queued within ``timeout`` (default ``close_timeout``) seconds.

        Whatever cannot be sent in time is spilled (or dropped with a log line).
        """
        if self._closed:
            return
        self._closed = True
        _lifecycle.unregister(self)
        self._poller.close()
        self._sender.close(self.close_timeout if timeout is None else timeout)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.close)

    # --- internals -----------------------------------------------------------------

    def _experiment(self, experiment: str) -> Optional[Experiment]:
        snapshot = self._poller.snapshot
        if snapshot is None:
            return None
        found = snapshot.find(experiment)
        unknown = self._unknown_experiments
        if found is None and experiment not in unknown and len(unknown) < _MAX_REMEMBERED_UNKNOWN:
            unknown.add(experiment)
            logger.warning("expd: experiment %r is not running in config %d", experiment, snapshot.version)
        return found

    def _record(self, event_type: str, fields: Dict[str, Any]) -> bool:
        """Canonicalise the experiment, fill a missing variant, redact and bound its text, stamp and enqueue one event."""
        return self._sender.enqueue(self._prepare(event_type, fields))

    def _record_later(self, pending: Any) -> bool:
        """Enqueue a measured call whose event the sender thread builds (``pending.event()``)."""
        return self._sender.enqueue(pending)

    def _prepare(self, event_type: str, fields: Dict[str, Any], now: Optional[float] = None) -> Dict[str, Any]:
        """The wire event of ``fields``: experiment id canonical, variant filled, text redacted and bounded, stamped."""
        snapshot = self._poller.snapshot
        found = snapshot.find(str(fields.get("experiment_id"))) if snapshot is not None else None
        if found is not None:
            fields["experiment_id"] = found.id
            if fields.get("variant") is None and fields.get("user_id") is not None:
                # assign()'s cache: no hashing for a user seen on this config.
                decision, _ = self._exposures.resolve(found, str(fields["user_id"]), EXPOSE_NONE)
                if decision is not None:
                    fields["variant"] = decision.variant
        if fields.get("variant") is None:
            fields.pop("variant", None)
        if event_type == MODEL_CALL:
            redact = self._redact
            if redact is not None:
                for name in REDACTED_FIELDS:
                    value = fields.get(name)
                    if type(value) is str:
                        fields[name] = redact(value)
            bound_model_call_text(fields)
        return new_event(event_type, fields, now)

    def _reset_after_fork(self) -> None:
        self._exposures.reset_after_fork()
        self._poller.reset_after_fork()
        self._sender.reset_after_fork()
