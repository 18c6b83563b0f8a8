"""Remembers which exposures this process already queued, in bounded memory."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Optional, Tuple

ExposureKey = Tuple[str, str, str]  # (experiment id, user id, variant)
_SECONDS_PER_DAY = 86_400


class ExposureLog:
    """One exposure per (experiment, user, variant, UTC day): ``first_time`` says when to send one.

    Per day rather than once per process, so the traffic timeline counts every
    active day of a long-running process. Bounded LRU: a key evicted may be
    reported again, which costs one event (the server keeps the first exposure
    per user), never a wrong attribution.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"exposure cache capacity must be positive, got {capacity}")
        self._capacity = capacity
        self._days: "OrderedDict[ExposureKey, int]" = OrderedDict()
        self._lock = threading.Lock()

    def reset_after_fork(self) -> None:
        """Replace a lock a parent thread may have held at fork time."""
        self._lock = threading.Lock()

    def first_time(self, key: ExposureKey, now: Optional[float] = None) -> bool:
        """True the first time ``key`` is seen on the UTC day of ``now`` (default: the current time)."""
        day = int((time.time() if now is None else now) // _SECONDS_PER_DAY)
        with self._lock:
            last = self._days.get(key)
            if last is not None:
                self._days.move_to_end(key)
                if last == day:
                    return False
            self._days[key] = day
            if len(self._days) > self._capacity:
                self._days.popitem(last=False)
            return True

    def __len__(self) -> int:
        return len(self._days)
