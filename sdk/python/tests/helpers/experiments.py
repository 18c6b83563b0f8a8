"""Building experiment configs as the server serves them, for the fake backend."""

import uuid
from typing import Any, Dict, List, Optional, Sequence, Tuple


def bucket_ranges(weights: Sequence[Tuple[str, int]], bucket_count: int) -> List[Dict[str, Any]]:
    """Contiguous ranges in allocation order; counts by largest remainder (as docs/architecture.md §5)."""
    total = sum(w for _, w in weights)
    exact = [bucket_count * w / total for _, w in weights]
    counts = [int(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in by_remainder[: bucket_count - sum(counts)]:
        counts[i] += 1
    ranges, start = [], 0
    for (variant, _), count in zip(weights, counts):
        ranges.append({"variant": variant, "start": start, "end": start + count})
        start += count
    return ranges


def experiment(
    name: str,
    weights: Sequence[Tuple[str, int]] = (("control", 50), ("treatment", 50)),
    prompts: Optional[Dict[str, str]] = None,
    variables: Optional[Dict[str, Dict[str, Any]]] = None,
    bucket_count: int = 10000,
    salt: Optional[str] = None,
) -> Dict[str, Any]:
    """A running experiment as ``GET /v1/config`` lists it."""
    prompts = prompts or {}
    variables = variables or {}
    return {
        "id": str(uuid.uuid4()),
        "name": name,
        "version": 1,
        "status": "running",
        "salt": salt or uuid.uuid4().hex[:8],
        "bucket_count": bucket_count,
        "control": weights[0][0],
        "allocation": [{"variant": v, "weight": w} for v, w in weights],
        "bucket_map": bucket_ranges(weights, bucket_count),
        "variants": {
            v: {**({"prompt": prompts[v]} if v in prompts else {}), "variables": variables.get(v, {})}
            for v, _ in weights
        },
        "metrics": [],
    }
