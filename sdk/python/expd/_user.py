"""The per-request user binding behind ``Client.as_user`` (contextvars).

The binding also remembers the id of the last model call measured inside
it (``Client.last_call_id``). It is one mutable object per ``as_user``
block, so a call made in a task spawned inside the block (which runs on a
copy of the context) is seen by the block too.
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Mapping, Optional, Tuple

from . import _baggage


class _Binding:
    __slots__ = ("user_id", "attributes", "last_call_id")

    def __init__(self, user_id: str, attributes: Optional[Mapping[str, Any]]) -> None:
        self.user_id = user_id
        self.attributes = attributes
        self.last_call_id: Optional[str] = None


_current: "contextvars.ContextVar[Optional[_Binding]]" = contextvars.ContextVar("expd_user", default=None)


@contextmanager
def bound_user(user_id: str, attributes: Optional[Mapping[str, Any]] = None,
               baggage: Iterable[Tuple[str, str]] = ()) -> Iterator[str]:
    """Bind ``user_id`` (and their targeting attributes) for the current thread or asyncio task until the block exits.

    ``baggage`` entries join the OpenTelemetry context's baggage for the block, where the API is present.
    """
    token = _current.set(_Binding(user_id, attributes))
    otel_token = _baggage.attach(baggage)
    try:
        yield user_id
    finally:
        _baggage.detach(otel_token)
        _current.reset(token)


def current_user() -> Optional[str]:
    """The user bound by the innermost ``as_user`` block, or None."""
    binding = _current.get()
    return None if binding is None else binding.user_id


def current_attributes(user_id: str) -> Optional[Mapping[str, Any]]:
    """The attributes bound with ``user_id`` by the innermost ``as_user`` block, or None."""
    binding = _current.get()
    return binding.attributes if binding is not None and binding.user_id == user_id else None


def note_call(call_id: str) -> None:
    """Remember ``call_id`` as the innermost ``as_user`` block's last model call (no-op outside one)."""
    binding = _current.get()
    if binding is not None:
        binding.last_call_id = call_id


def last_call_id() -> Optional[str]:
    """The id of the last model call measured in the innermost ``as_user`` block, or None."""
    binding = _current.get()
    return None if binding is None else binding.last_call_id
