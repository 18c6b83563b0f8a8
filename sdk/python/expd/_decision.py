"""One user's assignment in one experiment, decided as ``POST /v1/assign`` decides it.

Rules (``bucketing/doc.go`` of the repository, "Decision"), in order: the
lifecycle (an experiment that is not running serves one variant to
everyone, outside the experiment), then the sticky filters, then the
bucket map.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

# Reason codes. holdout, layer and not_targeted are reserved for holdouts,
# layers and targeting rules; nothing decides them yet.
NOT_RUNNING = "not_running"  # draft, scheduled or stopped: control for everyone
SHIPPED = "shipped"  # the shipped variant for everyone
HOLDOUT = "holdout"
LAYER = "layer"
NOT_TARGETED = "not_targeted"
PINNED = "pinned"  # the sticky filters keep the user off their bucket's variant
BUCKETED = "bucketed"  # the bucket map's variant


class Decision(NamedTuple):
    """A user's assignment: the variant, whether the user counts in the experiment's analysis, and why."""

    variant: str
    in_experiment: bool
    reason_code: str


def closed_by(status: Optional[str]) -> Optional[str]:
    """The reason code of a status in which everyone gets one variant; None while running (or without a status)."""
    if status is None or status == "running":
        return None
    return SHIPPED if status == "shipped" else NOT_RUNNING
