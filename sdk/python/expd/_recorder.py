"""What model-call measurement needs of a client, as a protocol.

``_model_call`` and ``_wrap`` depend on this, not on ``_client``, so the
client module imports them without an import circle.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Protocol

from ._prices import PriceTable


class Recorder(Protocol):
    """The part of ``Client`` that measured model calls use."""

    capture_text: bool
    _prices: PriceTable

    def _expose_call(self, experiment: str, user_id: str) -> Optional[str]:
        """The user's variant, with an exposure queued for this one call."""
        ...

    def _record(self, event_type: str, fields: Dict[str, Any]) -> bool:
        """Canonicalise, stamp and enqueue one event."""
        ...
