"""Building wire events: ids, timestamps and per-type fields."""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timezone
from typing import Any, Dict, Optional

EXPOSURE = "exposure"
MODEL_CALL = "model_call"
BUSINESS_EVENT = "business_event"
EVENT_TYPES = frozenset((EXPOSURE, MODEL_CALL, BUSINESS_EVENT))

# The server's bounds on text fields, in UTF-8 bytes: a longer field gets the whole event
# rejected, so long prompts, responses and error pages are cut instead.
MODEL_CALL_TEXT_BYTES = {"prompt": 64 * 1024, "response": 64 * 1024, "error": 4 * 1024, "model": 256}
_MAX_UTF8_BYTES_PER_CHAR = 4


# track() stamps events on the caller's thread: formatting the seconds once per second keeps it cheap.
_last_second = (-1, "")


def rfc3339_ms(epoch_seconds: float) -> str:
    """Format a Unix time as RFC 3339 UTC with milliseconds, e.g. ``2026-11-21T10:00:00.123Z``."""
    global _last_second
    whole, millis = divmod(int(round(epoch_seconds * 1000)), 1000)
    second, prefix = _last_second
    if second != whole:
        prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        _last_second = (whole, prefix)
    return f"{prefix}.{millis:03d}Z"


class _RandomPool:
    """Random bytes from os.urandom, read 4 KiB at a time and kept as hex: one
    system call and one hex conversion per 256 ids instead of one per id
    (they cost more than the rest of an event). The lock keeps threads from
    sharing bytes; a forked child starts a fresh pool so it never repeats its
    parent's ids."""

    _SIZE = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hex = ""
        self._offset = 0

    def take32(self) -> str:
        """32 random hex digits (16 bytes)."""
        with self._lock:
            offset = self._offset
            if offset + 32 > len(self._hex):
                self._hex, offset = os.urandom(self._SIZE).hex(), 0
            self._offset = offset + 32
            return self._hex[offset:offset + 32]

    def reset(self) -> None:
        self._lock = threading.Lock()
        self._hex, self._offset = "", 0


_pool = _RandomPool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pool.reset)

# The RFC 4122 variant digit (10xx in binary) for each random hex digit.
_VARIANT = {d: "89ab"[int(d, 16) & 3] for d in "0123456789abcdef"}


def uuid4_string() -> str:
    """A random (version 4, RFC 4122 variant) UUID string; uuid.uuid4() without the object."""
    h = _pool.take32()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


def parse_rfc3339(value: str) -> float:
    """Parse an RFC 3339 timestamp (``Z`` or offset) into a Unix time."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def cut_utf8(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` of UTF-8, never inside a character."""
    encoded = text.encode("utf-8", "replace")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", "ignore")


def bound_model_call_text(fields: Dict[str, Any]) -> None:
    """Cut a model_call's text fields to the server's bounds, in place."""
    for name, max_bytes in MODEL_CALL_TEXT_BYTES.items():
        value = fields.get(name)
        # Most text is far shorter than any bound: skip encoding it.
        if isinstance(value, str) and len(value) * _MAX_UTF8_BYTES_PER_CHAR > max_bytes:
            fields[name] = cut_utf8(value, max_bytes)


def new_event(event_type: str, fields: Dict[str, Any], now: Optional[float] = None) -> Dict[str, Any]:
    """Stamp ``fields`` with a type, a fresh uuid4 ``event_id`` and a timestamp.

    Fields the caller already set (an ``event_id`` or ``timestamp`` of their
    own) are kept, so replays and imports preserve identity and time.
    """
    event: Dict[str, Any] = {"type": event_type}
    event.update(fields)
    event["type"] = event_type
    # Only what the caller left out: a model call carries its id already.
    if event.get("event_id") is None:
        event["event_id"] = uuid4_string()
    if event.get("timestamp") is None:
        event["timestamp"] = rfc3339_ms(time.time() if now is None else now)
    return event
