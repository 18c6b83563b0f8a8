"""Process-level hooks for live clients: re-create threads after fork, flush at exit."""

from __future__ import annotations

import atexit
import os
import weakref
from typing import Any, Protocol



class Hooked(Protocol):
    """What the hooks call on a live client."""

    def close(self) -> Any: ...

    def _reset_after_fork(self) -> None: ...


# Weak references: a client the application dropped is not kept alive by the hooks.
_live: "weakref.WeakSet[Hooked]" = weakref.WeakSet()


def register(client: Hooked) -> None:
    """Track ``client`` for the fork and exit hooks until it is closed."""
    _live.add(client)


def unregister(client: Hooked) -> None:
    """Stop tracking a closed client."""
    _live.discard(client)


def _after_fork_in_child() -> None:
    for client in list(_live):
        client._reset_after_fork()


def _close_all_at_exit() -> None:
    for client in list(_live):
        client.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_close_all_at_exit)
