"""Model prices: the embedded table (``model_prices.json``, a copy of
``sdk/prices/model_prices.json``) and the cost of one call from its usage."""

from __future__ import annotations

import json
import logging
import re
import threading
from importlib import resources
from typing import Any, Dict, Mapping, NamedTuple, Optional

logger = logging.getLogger("expd")

# A trailing snapshot or version suffix: -2024-08-06, -20250929, -0613, -2411, -002, -latest, @20241022.
_VERSION_SUFFIX = re.compile(r"[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4}|latest)$")
# Unknown models are logged once each; past this many, silently.
_MAX_REMEMBERED_UNKNOWN = 1000
_MAX_REMEMBERED_MODELS = 1000


class Price(NamedTuple):
    """USD per input token and per output token."""

    input: float
    output: float


def _load_shipped() -> Dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath("model_prices.json").read_text(encoding="utf-8"))


_shipped: Optional[Dict[str, Price]] = None
_shipped_lock = threading.Lock()


def shipped_prices() -> Dict[str, Price]:
    """The embedded table, by model name (loaded once, on first use)."""
    global _shipped
    with _shipped_lock:
        if _shipped is None:
            _shipped = {name: Price(p["input"], p["output"]) for name, p in _load_shipped()["models"].items()}
        return _shipped


def as_price(value: Any) -> Price:
    """A Price from a Price, an (input, output) pair or a ``{"input", "output"}`` mapping."""
    if isinstance(value, Mapping):
        return Price(float(value["input"]), float(value["output"]))
    given_input, given_output = value
    return Price(float(given_input), float(given_output))


def cost_usd(price: Price, input_tokens: Optional[int], output_tokens: Optional[int]) -> Optional[float]:
    """The cost of a call's tokens at ``price``; None without input tokens."""
    if input_tokens is None:
        return None
    return input_tokens * price.input + (output_tokens or 0) * price.output


class PriceTable:
    """The shipped prices under a client's overrides, looked up by the table's rule.

    The rule (``lookup`` in the table): the model name lower-cased; else
    without a provider prefix and one trailing version suffix, so
    ``gpt-4o-2024-08-06`` and ``openai/gpt-4o`` price as ``gpt-4o``.
    """

    def __init__(self, overrides: Optional[Mapping[str, Any]] = None) -> None:
        self._overrides = {name.lower(): as_price(p) for name, p in (overrides or {}).items()}
        self._unknown: set = set()
        # model -> price (or None), so a repeated model costs one dict lookup
        # instead of the suffix regex; bounded like _unknown.
        self._resolved: Dict[str, Optional[Price]] = {}

    def price_of(self, model: Optional[str]) -> Optional[Price]:
        """The price of ``model``, or None (logged once per model) when neither table has it."""
        if not isinstance(model, str) or not model:
            return None
        try:
            return self._resolved[model]
        except KeyError:
            pass
        price = self._lookup(model)
        if len(self._resolved) < _MAX_REMEMBERED_MODELS:
            self._resolved[model] = price
        return price

    def _lookup(self, model: str) -> Optional[Price]:
        name = model.lower()
        base = _VERSION_SUFFIX.sub("", name.rsplit("/", 1)[-1])
        shipped = shipped_prices()
        for table in (self._overrides, shipped):
            for key in (name, base):
                found = table.get(key)
                if found is not None:
                    return found
        if model not in self._unknown and len(self._unknown) < _MAX_REMEMBERED_UNKNOWN:
            self._unknown.add(model)
            logger.info("expd: no price for model %r; its calls record no cost_usd (pass model_prices=)", model)
        return None

    def cost(self, model: Optional[str], input_tokens: Optional[int], output_tokens: Optional[int]) -> Optional[float]:
        """The cost of one call, or None (unknown model, no input tokens)."""
        if input_tokens is None:
            return None
        price = self.price_of(model)
        return None if price is None else cost_usd(price, input_tokens, output_tokens)
