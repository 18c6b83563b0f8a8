"""Building wire events: ids, timestamps and per-type fields."""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timezone
from typing import Any, Dict, Optional

EXPOSURE = "exposure"
MODEL_CALL = "model_call"
BUSINESS_EVENT = "business_event"
EVENT_TYPES = frozenset((EXPOSURE, MODEL_CALL, BUSINESS_EVENT))


def rfc3339_ms(epoch_seconds: float) -> str:
    """Format a Unix time as RFC 3339 UTC with milliseconds, e.g. ``2026-11-21T10:00:00.123Z``."""
    whole, millis = divmod(int(round(epoch_seconds * 1000)), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"


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
        "event_id": str(uuid.uuid4()),
        "type": event_type,
        "timestamp": rfc3339_ms(time.time() if now is None else now),
    }
    event.update(fields)
    event["type"] = event_type
    return event
