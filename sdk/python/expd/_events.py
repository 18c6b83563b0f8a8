"""Building wire events: ids, timestamps and per-type fields."""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from typing import Any, Dict, Optional

EXPOSURE = "exposure"
MODEL_CALL = "model_call"
BUSINESS_EVENT = "business_event"
EVENT_TYPES = frozenset((EXPOSURE, MODEL_CALL, BUSINESS_EVENT))


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


def uuid4_string() -> str:
    """A random (version 4, RFC 4122 variant) UUID string; uuid.uuid4() without the object."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def parse_rfc3339(value: str) -> float:
    """Parse an RFC 3339 timestamp (``Z`` or offset) into a Unix time."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def new_event(event_type: str, fields: Dict[str, Any], now: Optional[float] = None) -> Dict[str, Any]:
    """Stamp ``fields`` with a type, a fresh uuid4 ``event_id`` and a timestamp.

    Fields the caller already set (an ``event_id`` or ``timestamp`` of their
    own) are kept, so replays and imports preserve identity and time.
    """
    event: Dict[str, Any] = {
        "event_id": uuid4_string(),
        "type": event_type,
        "timestamp": rfc3339_ms(time.time() if now is None else now),
    }
    event.update(fields)
    event["type"] = event_type
    return event
