"""Deterministic bucketing, byte-for-byte identical to the server's.

bucket = first 8 bytes of SHA-256(experiment_id + "." + salt + "." + user_id),
read big-endian as an unsigned 64-bit integer, modulo bucket_count. The
variant is the bucket-map range with start <= bucket < end.
"""

from __future__ import annotations

import hashlib
import base64
from bisect import bisect_right
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple


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


class Sticky:
    """Bloom filters of users pinned before a weight change, plus exact exceptions.

    ``resolve(digest, mapped)``: an exception for the digest's bytes 8..16,
    else the first filter (in order) of a variant other than ``mapped`` that
    holds the user, else ``mapped``. Probe i of a filter of m bits is bit
    (h1 + i*h2) mod m, with h1 = digest bytes 8..12 and h2 = bytes 12..16 | 1
    (big-endian); bit b is byte b // 8, bit b % 8.
    """

    __slots__ = ("_filters", "_exceptions", "_assigned")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self._filters = [_filter(f) for f in raw.get("filters") or []]
        self._exceptions: Dict[str, str] = {str(k): str(v) for k, v in (raw.get("exceptions") or {}).items()}
        # Every pinned user of a targeted experiment: they stay in when the targeting changes.
        assigned = raw.get("assigned")
        self._assigned = None if assigned is None else _filter(assigned)

    def __bool__(self) -> bool:
        return bool(self._filters or self._exceptions or self._assigned)

    def was_assigned(self, digest: bytes) -> bool:
        """Whether the assigned filter holds the user with ``digest``."""
        if self._assigned is None:
            return False
        _, bits, hashes, data = self._assigned
        return _holds(digest, bits, hashes, data)

    def resolve(self, digest: bytes, mapped: str) -> str:
        """The variant kept for the user with ``digest`` whose bucket the map gives to ``mapped``."""
        if self._exceptions:
            kept = self._exceptions.get(digest[8:16].hex())
            if kept is not None:
                return kept
        for variant, bits, hashes, data in self._filters:
            if variant != mapped and _holds(digest, bits, hashes, data):
                return variant
        return mapped


def _filter(f: Mapping[str, Any]) -> Tuple[str, int, int, bytes]:
    variant, bits, hashes = str(f.get("variant") or ""), int(f["bits"]), int(f["hashes"])
    data = base64.b64decode(f["data"])
    if bits <= 0 or hashes <= 0 or len(data) * 8 < bits:
        raise ValueError(f"sticky filter of {variant!r}: bad size")
    return variant, bits, hashes, data


def _holds(digest: bytes, bits: int, hashes: int, data: bytes) -> bool:
    h1 = int.from_bytes(digest[8:12], "big")
    h2 = int.from_bytes(digest[12:16], "big") | 1
    for i in range(hashes):
        bit = (h1 + i * h2) % bits
        if not data[bit >> 3] & (1 << (bit & 7)):
            return False
    return True
