"""One user's assignment in one experiment, decided as ``POST /v1/assign`` decides it.

Rules (``bucketing/doc.go`` of the repository, "Decision"), in order: the
lifecycle (an experiment that is not running serves one variant to
everyone, outside the experiment), then the holdouts, the layer and
targeting (control, outside the experiment, for a user a holdout holds
out, whose layer bucket lies outside the experiment's range, or who does
not match; holdouts and targeting not for a user the assigned filter
holds), then the sticky filters, then the bucket map.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

# Reason codes.
NOT_RUNNING = "not_running"  # draft, scheduled or stopped: control for everyone
SHIPPED = "shipped"  # the shipped variant for everyone
HOLDOUT = "holdout"  # held out of every experiment in scope: control, outside the experiment
LAYER = "layer"  # outside the experiment's range of its layer: control, outside the experiment
NOT_TARGETED = "not_targeted"  # the targeting condition does not match: control, outside the experiment
PINNED = "pinned"  # the sticky filters keep the user off their bucket's variant
BUCKETED = "bucketed"  # the bucket map's variant


class Decision(NamedTuple):
    """A user's assignment: the variant, whether the user counts in the experiment's analysis, and why."""

    variant: str
    in_experiment: bool
    reason_code: str

    @property
    def outside(self) -> bool:
        """The user is kept out of the running experiment: no exposure, and wrapped calls record nothing."""
        return self.reason_code in _OUTSIDE


def closed_by(status: Optional[str]) -> Optional[str]:
    """The reason code of a status in which everyone gets one variant; None while running (or without a status)."""
    if status is None or status == "running":
        return None
    return SHIPPED if status == "shipped" else NOT_RUNNING


_OUTSIDE = frozenset((NOT_TARGETED, HOLDOUT, LAYER))
