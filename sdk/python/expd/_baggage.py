"""W3C baggage for OpenTelemetry GenAI spans (docs/ingest.md, "OTLP traces").

Inside ``as_user``, where the application already has the OpenTelemetry API
(``opentelemetry-api``), the current context carries ``expd.user`` and, when
``as_user`` names an experiment the user is in, ``expd.experiment`` and
``expd.variant``; a baggage span processor copies them onto the spans of the
application's own GenAI instrumentation, which ``POST /v1/traces`` then
attributes. Without the API nothing happens: the client adds no dependency.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Tuple

try:  # the application's OpenTelemetry API, when it has one
    from opentelemetry import baggage as _baggage
    from opentelemetry import context as _context
except ImportError:  # pragma: no cover - exercised where the API is absent
    _baggage = None
    _context = None

USER = "expd.user"
EXPERIMENT = "expd.experiment"
VARIANT = "expd.variant"


def available() -> bool:
    """Whether the OpenTelemetry API is importable here."""
    return _baggage is not None


def attach(entries: Iterable[Tuple[str, str]]) -> Optional[Any]:
    """Make the current context one whose baggage has ``entries`` added; the token for ``detach``, or None."""
    if _baggage is None or _context is None:
        return None
    ctx = None
    for key, value in entries:
        ctx = _baggage.set_baggage(key, value, context=ctx)
    return None if ctx is None else _context.attach(ctx)


def detach(token: Optional[Any]) -> None:
    """Restore the context ``attach`` replaced."""
    if token is not None and _context is not None:
        _context.detach(token)
