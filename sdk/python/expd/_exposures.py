"""Remembers which exposures this process already sent, in bounded memory."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Tuple

ExposureKey = Tuple[str, str, str]  # (experiment id, user id, variant)


class ExposureLog:
    """An LRU set of (experiment, user, variant): ``first_time`` is True once per key.

    A key evicted from the LRU may be reported again later; the server keeps
    the first exposure per user, so a repeat costs one event, never a wrong
    attribution.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"exposure cache capacity must be positive, got {capacity}")
        self._capacity = capacity
        self._seen: "OrderedDict[ExposureKey, None]" = OrderedDict()
        self._lock = threading.Lock()

    def reset_after_fork(self) -> None:
        """Replace a lock a parent thread may have held at fork time."""
        self._lock = threading.Lock()

    def first_time(self, key: ExposureKey) -> bool:
        """True the first time ``key`` is seen (while it stays in the LRU), else False."""
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return False
            self._seen[key] = None
            if len(self._seen) > self._capacity:
                self._seen.popitem(last=False)
            return True

    def __len__(self) -> int:
        return len(self._seen)
