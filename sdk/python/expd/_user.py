"""The per-request user binding behind ``Client.as_user`` (contextvars)."""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from typing import Iterator, Optional

_current_user: "contextvars.ContextVar[Optional[str]]" = contextvars.ContextVar("expd_user", default=None)


@contextmanager
def bound_user(user_id: str) -> Iterator[str]:
    """Bind ``user_id`` for the current thread or asyncio task until the block exits."""
    token = _current_user.set(user_id)
    try:
        yield user_id
    finally:
        _current_user.reset(token)


def current_user() -> Optional[str]:
    """The user bound by the innermost ``as_user`` block, or None."""
    return _current_user.get()
