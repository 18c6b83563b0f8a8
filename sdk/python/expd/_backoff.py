"""Exponential backoff with full jitter, overridden by the server's Retry-After."""

from __future__ import annotations

import random
from typing import Optional


class Backoff:
    """Delays for successive retries: ``base * 2**attempt`` capped, jittered.

    A ``Retry-After`` from the server wins over the computed delay (still
    capped, so a hostile or buggy header cannot park the worker for hours).
    """

    def __init__(self, base: float, cap: float, rng: Optional[random.Random] = None) -> None:
        self.base = base
        self.cap = cap
        self._rng = rng or random.Random()

    def delay(self, attempt: int, retry_after: Optional[float] = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        if retry_after is not None:
            return min(retry_after, self.cap)
        ceiling = min(self.cap, self.base * (2 ** attempt))
        # Full jitter keeps many forked workers from retrying in lockstep.
        return self._rng.uniform(ceiling / 2, ceiling)
