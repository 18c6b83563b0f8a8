"""Measuring one model call and recording it as a ``model_call`` event."""

from __future__ import annotations

import logging
import time
from typing import Any, Dict, Mapping, Optional

from ._events import MODEL_CALL, uuid4_string
from ._prices import Price, as_price, cost_usd
from ._provider_shapes import model_of, prompt_text, response_text, usage_of
from ._recorder import Recorder
from ._user import note_call

logger = logging.getLogger("expd")


class ModelCall:
    """One measured model call, the object ``intercept_model_call`` yields.

    Creating it records the call's exposure (one per call, as the spec says of
    model calls); entering starts the clock; leaving records a ``model_call`` event with the
    latency, the error if the block raised (the exception propagates
    unchanged), and whatever the caller reported: ``first_token()`` for
    streams, ``set_usage(...)``, ``response`` text, ``cost_usd``. Use
    ``variant`` to pick what to send to the provider (None: treat as control).

    ``call_id`` is the ``event_id`` of the ``model_call`` it records, known
    from the start: pass it to ``Client.score`` to attach feedback. Without
    an explicit ``cost_usd``, the cost is computed from the usage at
    ``price`` (this call's price, or None: the client's table by model).
    """

    def __init__(
        self,
        client: Recorder,
        experiment: str,
        user_id: str,
        model: Optional[str] = None,
        prompt: Optional[str] = None,
        price: Any = None,
    ) -> None:
        self.call_id = uuid4_string()
        self.experiment = experiment
        self.user_id = user_id
        self.model = model
        self.prompt = prompt
        self.response: Optional[str] = None
        self.cost_usd: Optional[float] = None
        self.price: Optional[Price] = None if price is None else as_price(price)
        self.input_tokens: Optional[int] = None
        self.output_tokens: Optional[int] = None
        self.total_tokens: Optional[int] = None
        decision = client._decide_call(experiment, user_id)
        self.variant: Optional[str] = None if decision is None else decision.variant
        # A user outside the experiment (not targeted): the call records
        # nothing, since every event would enter the experiment's analysis.
        self._outside = decision is not None and decision.outside
        self._client = client
        self._started = time.perf_counter()
        self._first_token: Optional[float] = None
        self._finished = self._outside
        self._ended = self._started
        self._wall: Optional[float] = None
        self._error: Optional[str] = None
        self._request: Optional[Mapping[str, Any]] = None
        if not self._outside:
            note_call(self.call_id)

    def start(self) -> "ModelCall":
        """Restart the clock at the moment the provider is called."""
        self._started = time.perf_counter()
        return self

    def first_token(self) -> None:
        """Mark the arrival of the first streamed token (only the first mark counts)."""
        if self._first_token is None:
            self._first_token = time.perf_counter()

    def set_usage(
        self,
        input_tokens: Optional[int] = None,
        output_tokens: Optional[int] = None,
        total_tokens: Optional[int] = None,
    ) -> None:
        """Report token usage; the total defaults to input + output."""
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        if total_tokens is None and input_tokens is not None:
            total_tokens = input_tokens + (output_tokens or 0)
        self.total_tokens = total_tokens

    def finish(self, error: Optional[BaseException] = None) -> None:
        """Record the call once (later calls are ignored). Never raises.

        Only the clock and the error are read here; the event is built on
        the sender thread (``event``), off the caller's path, from what the
        call holds then: report usage, text and cost before finishing.
        """
        if self._finished:
            return
        self._finished = True
        self._ended = time.perf_counter()
        self._wall = time.time()
        self._error = None if error is None else f"{type(error).__name__}: {error}"
        self._client._record_later(self)

    def event(self) -> Dict[str, Any]:
        """The wire ``model_call`` of a finished call (the sender thread calls it once)."""
        request, self._request = self._request, None
        if request is not None and self.prompt is None:
            self.prompt = prompt_text(request)
        fields: Dict[str, Any] = {
            "event_id": self.call_id,
            "experiment_id": self.experiment,
            "user_id": self.user_id,
            "variant": self.variant,
            "model": self.model,
            "latency_ms": _millis(self._ended - self._started),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "error": self._error,
        }
        optional = {
            "time_to_first_token_ms": None if self._first_token is None else _millis(self._first_token - self._started),
            "cost_usd": self._cost(),
            "prompt": self.prompt,
            "response": self.response,
        }
        fields.update((name, value) for name, value in optional.items() if value is not None)
        return self._client._prepare(MODEL_CALL, fields, self._wall)

    def _prompt_from(self, request: Optional[Mapping[str, Any]]) -> None:
        """For ``wrap``: a request (``prompt_request``'s snapshot) whose prompt ``event`` encodes."""
        self._request = request

    def _read_response(self, response: Any, capture_text: bool) -> None:
        """For ``wrap``: the response's model, usage and (with ``capture_text``) text, read now,
        before the caller can change the object (an odd shape costs the fields, never the call)."""
        try:
            self.model = model_of(response) or self.model
            usage = usage_of(response)
            if usage is not None:
                self.set_usage(*usage)
            if capture_text:
                self.response = response_text(response)
        except Exception:  # noqa: BLE001 - an odd response shape must not break the caller
            logger.debug("expd: could not read usage from %r", type(response), exc_info=True)

    def _cost(self) -> Optional[float]:
        """The explicit cost, else the usage priced at this call's price or the client's table."""
        if self.cost_usd is not None:
            return self.cost_usd
        try:
            if self.price is not None:
                return cost_usd(self.price, self.input_tokens, self.output_tokens)
            return self._client._prices.cost(self.model, self.input_tokens, self.output_tokens)
        except Exception:  # noqa: BLE001 - pricing must never break the call's record
            logger.debug("expd: could not price model %r", self.model, exc_info=True)
            return None

    def __enter__(self) -> "ModelCall":
        return self.start()

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        self.finish(exc)

    async def __aenter__(self) -> "ModelCall":
        return self.start()

    async def __aexit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        self.finish(exc)


def _millis(seconds: float) -> float:
    return round(seconds * 1000.0, 3)
