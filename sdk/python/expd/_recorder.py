"""What model-call measurement needs of a client, as a protocol.

``_model_call`` and ``_wrap`` depend on this, not on ``_client``, so the
client module imports them without an import circle.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Protocol

from ._decision import Decision
from ._prices import PriceTable


class Recorder(Protocol):
    """The part of ``Client`` that measured model calls use."""

    capture_text: bool
    _prices: PriceTable

    def _decide_call(self, experiment: str, user_id: str) -> Optional[Decision]:
        """The user's decision, with an exposure queued for this one call (none outside the experiment)."""
        ...

    def _record(self, event_type: str, fields: Dict[str, Any]) -> bool:
        """Canonicalise, stamp and enqueue one event."""
        ...

    def _record_later(self, pending: Any) -> bool:
        """Enqueue an event the sender thread builds: ``pending.event()`` (see ``_sender``)."""
        ...

    def _prepare(self, event_type: str, fields: Dict[str, Any], now: Optional[float] = None) -> Dict[str, Any]:
        """Canonicalise, redact, bound and stamp one event (the wire form ``_record`` enqueues)."""
        ...
