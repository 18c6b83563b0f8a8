"""The polled org config, parsed once into an immutable lookup structure."""

from __future__ import annotations

import hashlib
import itertools
from typing import Any, Dict, List, Mapping, Optional

from ._bucketing import BucketMap, Sticky
from ._decision import BUCKETED, HOLDOUT, LAYER, NOT_TARGETED, PINNED, Decision, closed_by
from ._targeting import ConditionError, compile_condition

# One number per parsed experiment: variants the exposure log caches are valid for it only.
_generations = itertools.count(1)


class ConfigError(ValueError):
    """The config body does not have the shape of the wire contract."""


class Slot:
    """A range of a layer's or a holdout's own bucket space: the user is in it when start <= bucket < end."""

    __slots__ = ("_hash_prefix", "id", "bucket_count", "start", "end")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.bucket_count = int(raw["bucket_count"])
        self.start = int(raw.get("start") or 0)
        self.end = int(raw["end"])
        if self.bucket_count <= 0 or self.start > self.end:
            raise ValueError(f"slot {raw.get('id')!r}: bucket_count must be positive and start <= end")
        self.id = str(raw["id"])
        self._hash_prefix = f"{raw['id']}.{raw['salt']}.".encode("utf-8")

    def holds(self, user_id: str) -> bool:
        digest = hashlib.sha256(self._hash_prefix + user_id.encode("utf-8")).digest()
        return self.start <= int.from_bytes(digest[:8], "big") % self.bucket_count < self.end


class Experiment:
    """One experiment as the config serves it, ready for local assignment."""

    __slots__ = (
        "id", "name", "version", "salt", "bucket_count", "control",
        "variants", "bucket_map", "sticky", "closed", "targeting", "holdouts", "layer", "_hash_prefix", "gen",
        "_outside",
    )

    def __init__(self, raw: Mapping[str, Any]) -> None:
        try:
            self.id: str = str(raw["id"])
            self.name: str = str(raw["name"])
            self.salt: str = str(raw["salt"])
            self.bucket_count: int = int(raw["bucket_count"])
            self.bucket_map = BucketMap(raw["bucket_map"])
            sticky = Sticky(raw.get("sticky") or {})
            self.holdouts = tuple(Slot(h) for h in raw.get("holdouts") or ())
            self.layer: Optional[Slot] = Slot(raw["layer"]) if raw.get("layer") is not None else None
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"experiment {raw.get('name') or raw.get('id')!r}: {exc!r}") from exc
        if self.bucket_count <= 0:
            raise ConfigError(f"experiment {self.name!r}: bucket_count must be positive")
        self.sticky: Optional[Sticky] = sticky if sticky else None
        self.closed: Optional[str] = closed_by(raw.get("status"))
        self.version: Optional[int] = raw.get("version")
        allocation = raw.get("allocation") or []
        first = allocation[0].get("variant") if allocation else None
        self.control: Optional[str] = raw.get("control") or first
        # Control outside the experiment, by reason: made once, not per decision.
        self._outside = {r: Decision(self.control, False, r) for r in (HOLDOUT, LAYER, NOT_TARGETED)} if self.control else None
        self.variants: Dict[str, Dict[str, Any]] = dict(raw.get("variants") or {})
        self.targeting = None
        if raw.get("targeting") is not None:
            try:
                self.targeting = compile_condition(raw["targeting"])
            except ConditionError:
                # The server refuses invalid conditions; one that does not compile here matches no one.
                self.targeting = lambda attributes: False
        # Hashing the id+salt prefix is the same for every user: encode it once.
        self._hash_prefix = f"{self.id}.{self.salt}.".encode("utf-8")
        self.gen = next(_generations)

    def bucket(self, user_id: str) -> int:
        """Return the user's bucket (same formula as ``bucket_of``, prefix pre-encoded)."""
        digest = hashlib.sha256(self._hash_prefix + user_id.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.bucket_count

    def decide(self, user_id: str, attributes: Optional[Mapping[str, Any]] = None) -> Optional[Decision]:
        """The user's decision (lifecycle, holdouts, layer, targeting, sticky filters, bucket map), or None if the map leaves the bucket unowned."""
        return self.decide_from(self.facts(user_id), attributes)

    def facts(self, user_id: str) -> tuple:
        """What the user's decision owes to hashing alone, fixed for this parse whatever the attributes:
        ``(mapped, inside, assigned, held, outside)``, ``inside`` the decision unless the holdout, the
        layer or the targeting keeps the user out (or the closed experiment's); ``held`` is, per
        holdout, whether it holds the user out, None when the holdout step is not evaluated (no
        holdouts, or the user was assigned). The exposure log keeps them, so a warm targeted
        decision only evaluates the condition again."""
        digest = hashlib.sha256(self._hash_prefix + user_id.encode("utf-8")).digest()
        mapped = self.bucket_map.variant_for(int.from_bytes(digest[:8], "big") % self.bucket_count)
        if mapped is None:
            return (None, None, False, None, False)
        if self.closed is not None:
            return (mapped, Decision(mapped, False, self.closed), False, None, False)
        kept = mapped if self.sticky is None else self.sticky.resolve(digest, mapped)
        assigned = self._assigned(digest)
        held = tuple(h.holds(user_id) for h in self.holdouts) if self.holdouts and not assigned else None
        outside = self.layer is not None and not self.layer.holds(user_id)
        inside = Decision(kept, True, BUCKETED if kept == mapped else PINNED)
        return (mapped, inside, assigned, held, outside)

    def decide_from(self, facts: tuple, attributes: Optional[Mapping[str, Any]]) -> Optional[Decision]:
        """The rules in order, applied to the user's facts and attributes."""
        mapped, inside, assigned, held, outside = facts
        if mapped is None or self.closed is not None:
            return inside
        reason = None
        if held and any(held):  # held is None for an assigned user
            reason = HOLDOUT
        elif outside:
            reason = LAYER  # ranges never move: an assigned user is inside
        elif self.targeting is not None and not assigned and not self.targeting(attributes or {}):
            reason = NOT_TARGETED
        if reason is None:
            return inside
        return self._outside[reason] if self._outside is not None else Decision(mapped, False, reason)

    def _assigned(self, digest: bytes) -> bool:
        return self.sticky is not None and self.sticky.was_assigned(digest)

    def prompt_of(self, variant: str) -> Optional[str]:
        """Return the variant's prompt text, or None when it has none."""
        prompt = (self.variants.get(variant) or {}).get("prompt")
        return prompt if isinstance(prompt, str) else None

    def variables_of(self, variant: str) -> Dict[str, Any]:
        """Return the variant's custom variables (empty when it has none)."""
        variables = (self.variants.get(variant) or {}).get("variables")
        return dict(variables) if isinstance(variables, Mapping) else {}


class ConfigSnapshot:
    """One org config version: experiments addressable by id or by name."""

    __slots__ = ("version", "etag", "_by_key")

    def __init__(self, version: int, experiments: List[Experiment], etag: Optional[str]) -> None:
        self.version = version
        self.etag = etag
        by_key: Dict[str, Experiment] = {}
        for experiment in experiments:
            by_key[experiment.name] = experiment
        # Ids win over names should a name ever look like another experiment's id.
        for experiment in experiments:
            by_key[experiment.id] = experiment
        self._by_key = by_key

    @classmethod
    def parse(cls, body: Mapping[str, Any], etag: Optional[str]) -> "ConfigSnapshot":
        """Build a snapshot from a ``GET /v1/config`` body."""
        try:
            version = int(body["config_version"])
            raw_experiments = list(body.get("experiments") or [])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"config body: {exc!r}") from exc
        return cls(version, [Experiment(raw) for raw in raw_experiments], etag)

    def find(self, experiment: str) -> Optional[Experiment]:
        """Return the experiment named or identified by ``experiment``."""
        return self._by_key.get(experiment)

    def __contains__(self, experiment: str) -> bool:
        return experiment in self._by_key
