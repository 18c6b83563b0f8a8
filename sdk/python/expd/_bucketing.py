"""Deterministic bucketing, byte-for-byte identical to the server's.

bucket = first 8 bytes of SHA-256(experiment_id + "." + salt + "." + user_id),
read big-endian as an unsigned 64-bit integer, modulo bucket_count. The
variant is the bucket-map range with start <= bucket < end.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from typing import Any, Mapping, Optional, Sequence, Tuple


def bucket_of(experiment_id: str, salt: str, bucket_count: int, user_id: str) -> int:
    """Return the user's bucket in ``[0, bucket_count)``."""
    digest = hashlib.sha256(f"{experiment_id}.{salt}.{user_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % bucket_count


class BucketMap:
    """A sorted bucket map answering "which variant owns this bucket" by bisection."""

    __slots__ = ("_starts", "_ends", "_variants")

    def __init__(self, ranges: Sequence[Mapping[str, Any]]) -> None:
        ordered: Sequence[Tuple[int, int, str]] = sorted(
            (int(r["start"]), int(r["end"]), str(r["variant"])) for r in ranges
        )
        self._starts = [start for start, _, _ in ordered]
        self._ends = [end for _, end, _ in ordered]
        self._variants = [variant for _, _, variant in ordered]

    def variant_for(self, bucket: int) -> Optional[str]:
        """Return the variant whose range holds ``bucket``, or None if no range does."""
        i = bisect_right(self._starts, bucket) - 1
        if i < 0 or bucket >= self._ends[i]:
            return None
        return self._variants[i]
