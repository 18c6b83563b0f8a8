"""Remembers each user's variant and last exposure day, in bounded memory."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any, List, Mapping, Optional, Tuple

from ._decision import HOLDOUT, Decision

ExposureKey = Tuple[str, str]  # (experiment id, user id)
_SECONDS_PER_DAY = 86_400


# What a resolve owes the exposure stream.
EXPOSE_NONE = 0  # track() filling a variant: no exposure
EXPOSE_DAILY = 1  # assign, get_prompt, get_variables: once per (experiment, user, variant, UTC day)
EXPOSE_ALWAYS = 2  # a model call: every call, and it counts as the day's
_NO_EXPOSURE_DAY = -1  # an entry whose variant has had no exposure yet
HOLDOUT_EXPOSED = "exposed"  # the variant of a holdout exposure of a user let through (held out: HOLDOUT)


class ExposureLog:
    """One exposure per (experiment, user, variant, UTC day), and the variant cached per config.

    Per (experiment, user) it keeps the variant computed on the current
    config (``Experiment.gen``) and the UTC day of its last exposure, so a
    warm ``assign`` or a ``track`` without a variant is a dict lookup with
    no hashing until the config changes. Per day rather than once per
    process, so the traffic timeline counts every active day of a
    long-running process. A user whose variant changes and changes back
    within a day gets one more exposure (only the latest variant is kept).
    Bounded LRU: a pair evicted may be reported again, which costs one event
    (the server keeps the first exposure per user), never a wrong attribution.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"exposure cache capacity must be positive, got {capacity}")
        self._capacity = capacity
        self._entries: "OrderedDict[ExposureKey, List[Any]]" = OrderedDict()  # [gen, decision, day, facts]
        self._lock = threading.Lock()

    def reset_after_fork(self) -> None:
        """Replace a lock a parent thread may have held at fork time."""
        self._lock = threading.Lock()

    def resolve(self, experiment: Any, user_id: str, mode: int,
                now: Optional[float] = None, attributes: Optional[Mapping[str, Any]] = None,
                ) -> Tuple[Optional[Decision], bool]:
        """``(decision, due)``: the user's decision in ``experiment`` (None: in no range) and
        whether ``mode`` (``EXPOSE_*``) owes an exposure on the UTC day of ``now`` (default:
        the current time). ``experiment`` has ``id``, ``gen``, ``decide`` and ``targeting``.
        A user outside the experiment (not targeted) owes none. A targeted experiment's
        decision depends on ``attributes``, so it is computed again, except for ``track``
        (``EXPOSE_NONE``), which has none and takes the last one."""
        targeted = getattr(experiment, "targeting", None) is not None
        day = int((time.time() if now is None else now) // _SECONDS_PER_DAY)
        key = (experiment.id, user_id)
        gen = experiment.gen
        facts = last = None  # the facts and decision of this config's last call, if any
        last_day = _NO_EXPOSURE_DAY
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                if entry[0] == gen and (not targeted or mode == EXPOSE_NONE):
                    decision = entry[1]
                    due = decision is not None and not decision.outside and (mode == EXPOSE_ALWAYS or (mode == EXPOSE_DAILY and entry[2] != day))
                    if due:
                        entry[2] = day
                    return decision, due
                if entry[0] == gen:
                    # A targeted experiment: only the condition is evaluated again.
                    last, last_day, facts = entry[1], entry[2], entry[3]
        if facts is None and hasattr(experiment, "facts"):
            facts = experiment.facts(user_id)  # hashing, outside the lock
        decision = experiment.decide(user_id, attributes) if facts is None else experiment.decide_from(facts, attributes)
        if last is not None and decision is last:
            # A warm targeted call deciding as last time (decisions are made once per user's facts): the
            # entry would be written back unchanged unless the day's exposure is due, so it is not locked
            # again (a concurrent change is that call's to log).
            due = (mode == EXPOSE_ALWAYS or (mode == EXPOSE_DAILY and last_day != day)) and not decision.outside
            if not due or last_day == day:
                return decision, due
        with self._lock:
            entry = self._entries.get(key)
            # The day of the last exposure still counts while the variant stays.
            kept = entry is not None and entry[1] is not None and decision is not None and entry[1].variant == decision.variant
            due = decision is not None and not decision.outside and (
                mode == EXPOSE_ALWAYS or (mode == EXPOSE_DAILY and not (kept and entry[2] == day)))
            next_day = day if due else entry[2] if kept else _NO_EXPOSURE_DAY
            if entry is None:
                self._entries[key] = [gen, decision, next_day, facts]
                if len(self._entries) > self._capacity:
                    self._entries.popitem(last=False)
            else:
                entry[0], entry[1], entry[2], entry[3] = gen, decision, next_day, facts
            return decision, due

    def holdouts_due(self, experiment: Any, user_id: str, now: Optional[float] = None) -> List[Tuple[str, str]]:
        """The holdout exposures due after a ``resolve`` of the user in ``experiment`` (none
        unless its decision evaluated the holdout step): ``(holdout id, variant)`` per holdout,
        once per (holdout, user, variant, UTC day) as an experiment's exposure, whichever
        experiment of the holdout's scope decided (docs/targeting.md, "Holdout exposures").
        Kept in the same log, keyed by the holdout's id."""
        holdouts = getattr(experiment, "holdouts", ())
        if not holdouts:
            return []
        day = int((time.time() if now is None else now) // _SECONDS_PER_DAY)
        with self._lock:
            entry = self._entries.get((experiment.id, user_id))
            facts = entry[3] if entry is not None and entry[0] == experiment.gen else None
        if facts is None:
            facts = experiment.facts(user_id)  # evicted meanwhile: hashing again
        held = facts[3]
        if held is None:
            return []
        due = []
        with self._lock:
            for h, is_held in zip(holdouts, held):
                variant = HOLDOUT if is_held else HOLDOUT_EXPOSED
                key = (h.id, user_id)
                entry = self._entries.get(key)
                if entry is not None and entry[2] == day and entry[1].variant == variant:
                    continue
                self._entries[key] = [0, Decision(variant, False, ""), day, None]
                self._entries.move_to_end(key)
                if len(self._entries) > self._capacity:
                    self._entries.popitem(last=False)
                due.append((h.id, variant))
        return due

    def __len__(self) -> int:
        return len(self._entries)
