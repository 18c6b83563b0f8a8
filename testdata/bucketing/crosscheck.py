#!/usr/bin/env python3
"""Re-derive every case of vectors.json without the Go code that wrote it.

An independent implementation of bucketing/doc.go: hashlib for buckets,
fractions.Fraction for largest remainder, and a bucket-by-bucket list for
rebalancing (the Go code works on ranges). Exits 1 on any mismatch.

Usage: python3 crosscheck.py [vectors.json]
"""
import hashlib
import json
import os
import sys
from fractions import Fraction


def bucket(experiment_id, salt, user_id, bucket_count):
    data = (experiment_id + "." + salt + "." + user_id).encode("utf-8")
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big") % bucket_count


def target_counts(allocation, bucket_count):
    weights = [Fraction(s["weight"]) for s in allocation]
    total = sum(weights)
    quotas = [w * bucket_count / total for w in weights]
    counts = [q.numerator // q.denominator for q in quotas]
    leftover = bucket_count - sum(counts)
    # Larger remainder first, earlier slice on ties.
    order = sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in order[:leftover]:
        counts[i] += 1
    return {s["variant"]: c for s, c in zip(allocation, counts)}


def to_ranges(owners):
    ranges = []
    for b, v in enumerate(owners):
        if ranges and ranges[-1]["variant"] == v:
            ranges[-1]["end"] = b + 1
        else:
            ranges.append({"variant": v, "start": b, "end": b + 1})
    return ranges


def initial_map(allocation, bucket_count):
    counts = target_counts(allocation, bucket_count)
    owners = []
    for s in allocation:
        owners += [s["variant"]] * counts[s["variant"]]
    return to_ranges(owners)


def rebalance(old_map, allocation, bucket_count):
    owners = [None] * bucket_count
    for r in old_map:
        owners[r["start"]:r["end"]] = [r["variant"]] * (r["end"] - r["start"])
    targets = target_counts(allocation, bucket_count)
    kept = {}
    freed = []
    for b, v in enumerate(owners):
        if kept.get(v, 0) < targets.get(v, 0):
            kept[v] = kept.get(v, 0) + 1
        else:
            freed.append(b)
    freed.reverse()  # pop() then yields ascending buckets
    for s in allocation:
        v = s["variant"]
        for _ in range(targets[v] - kept.get(v, 0)):
            owners[freed.pop()] = v
    return to_ranges(owners)


def lookup(ranges, b):
    for r in ranges:
        if r["start"] <= b < r["end"]:
            return r["variant"]
    return None


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "vectors.json")
    with open(path, encoding="utf-8") as f:
        vectors = json.load(f)
    failures = []
    for i, c in enumerate(vectors["bucket_cases"]):
        got = bucket(c["experiment_id"], c["salt"], c["user_id"], c["bucket_count"])
        if got != c["bucket"]:
            failures.append(f"bucket_cases[{i}]: got {got}, file says {c['bucket']}")
    for i, c in enumerate(vectors["initial_map_cases"]):
        got = initial_map(c["allocation"], c["bucket_count"])
        if got != c["map"]:
            failures.append(f"initial_map_cases[{i}]: got {got}, file says {c['map']}")
    for i, c in enumerate(vectors["rebalance_cases"]):
        got = rebalance(c["old_map"], c["allocation"], c["bucket_count"])
        if got != c["map"]:
            failures.append(f"rebalance_cases[{i}]: got {got}, file says {c['map']}")
    for i, c in enumerate(vectors["lookup_cases"]):
        got = lookup(c["map"], c["bucket"])
        if got != c["variant"]:
            failures.append(f"lookup_cases[{i}]: got {got!r}, file says {c['variant']!r}")
    for line in failures:
        print(line)
    checked = sum(len(vectors[k]) for k in ("bucket_cases", "initial_map_cases", "rebalance_cases", "lookup_cases"))
    print(f"{checked} cases checked, {len(failures)} mismatches")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
