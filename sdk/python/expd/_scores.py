"""Building wire scores: feedback on one model call, sent to ``POST /v1/scores``.

A score is queued beside events, as a record of type ``score`` (the sender
posts those to ``/v1/scores`` without the type). Everything the server
would refuse is refused here, because one bad score gets its whole batch
refused (400): the caller's bad input must cost that score only.
"""

from __future__ import annotations

import math
import numbers
import re
import time
from datetime import datetime, timezone
from typing import Any, Dict, Optional

from ._events import cut_utf8, parse_rfc3339, rfc3339_ms

SCORE = "score"
SCORE_SOURCES = frozenset(("human", "judge", "code"))
MAX_COMMENT_BYTES = 4 * 1024
# Bounds of the other text fields, in UTF-8 bytes (docs/quality.md).
SCORE_TEXT_BYTES = {"call_id": 128, "name": 128, "evaluator": 256, "evaluator_version": 128, "judge_model": 256}
# The server's window for a score's timestamp (that of live events).
MAX_AGE_SECONDS = 24 * 3600
MAX_AHEAD_SECONDS = 5 * 60

# A call id is a model_call's event_id: printable ASCII without spaces.
_CALL_ID = re.compile(r"^[\x21-\x7e]+$")
# Same rule as business_metric names.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$")


class InvalidScore(ValueError):
    """A score the server would refuse; the message names the field."""


def new_score(
    call_id: Any,
    name: Any,
    value: Any,
    *,
    source: Any = "human",
    comment: Any = None,
    evaluator: Any = None,
    evaluator_version: Any = None,
    judge_model: Any = None,
    timestamp: Any = None,
) -> Dict[str, Any]:
    """The queue record of one score; raises InvalidScore naming the bad field."""
    if source not in SCORE_SOURCES:
        raise InvalidScore(f"source must be one of {sorted(SCORE_SOURCES)}, got {source!r}")
    if judge_model is not None and source != "judge":
        raise InvalidScore("judge_model is a field of source 'judge' scores only")
    record: Dict[str, Any] = {
        "type": SCORE,
        "call_id": _text("call_id", call_id, required=True, pattern=_CALL_ID),
        "name": _text("name", name, required=True, pattern=_NAME),
        "value": _value(value),
        "timestamp": _timestamp(timestamp),
        "source": source,
    }
    if comment is not None:
        # Feedback text longer than the bound is cut, not refused: the rating still counts.
        record["comment"] = cut_utf8(_text("comment", comment), MAX_COMMENT_BYTES)
    for field, given in (("evaluator", evaluator), ("evaluator_version", evaluator_version), ("judge_model", judge_model)):
        if given is not None:
            record[field] = _text(field, given)
    return record


def _text(field: str, value: Any, required: bool = False, pattern: Any = None) -> str:
    if not isinstance(value, str):
        raise InvalidScore(f"{field} must be a string, got {type(value).__name__}")
    if required and not value:
        raise InvalidScore(f"{field} is required")
    if "\x00" in value:
        raise InvalidScore(f"{field} must not contain NUL characters")
    limit = SCORE_TEXT_BYTES.get(field)
    if limit is not None and len(value.encode("utf-8", "surrogatepass")) > limit:
        raise InvalidScore(f"{field} must be at most {limit} bytes")
    if pattern is not None and not pattern.fullmatch(value):
        raise InvalidScore(f"{field} has characters it may not have: {value!r}")
    return value


def _value(value: Any) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if not isinstance(value, numbers.Real):
        raise InvalidScore(f"value must be a number or a boolean, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise InvalidScore(f"value must be finite, got {number}")
    return number


def _timestamp(value: Any) -> str:
    now = time.time()
    if value is None:
        return rfc3339_ms(now)
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        text, seconds = rfc3339_ms(moment.timestamp()), moment.timestamp()
    elif isinstance(value, str) and _RFC3339.fullmatch(value):
        text, seconds = value, parse_rfc3339(value)
    elif isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value):
        text, seconds = rfc3339_ms(float(value)), float(value)
    else:
        raise InvalidScore(f"timestamp must be a datetime, Unix seconds or RFC 3339 text, got {value!r}")
    if not now - MAX_AGE_SECONDS <= seconds <= now + MAX_AHEAD_SECONDS:
        raise InvalidScore(f"timestamp {text} is outside the accepted window (24 hours back, 5 minutes ahead)")
    return text
