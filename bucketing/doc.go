// Package bucketing assigns users to experiment variants deterministically
// (docs/architecture.md §5). It is pure: no I/O, no clock, no randomness. The server, the
// Go SDK and the Python SDK must all follow the rules below exactly; the shared
// vector file testdata/bucketing/vectors.json pins them down case by case.
//
// # Bucket of a user
//
// bucket = first 8 bytes of SHA-256(experiment_id + "." + salt + "." + user_id),
// read as a big-endian unsigned 64-bit integer, modulo bucket_count. The three
// strings are hashed as the exact UTF-8 bytes received: no trimming, no case
// folding, no Unicode normalization ("naïve" precomposed and decomposed are
// different users). experiment_id is the canonical id, never the name.
//
// bucket_count must lie in [MinBucketCount, MaxBucketCount] = [1, 1,000,000].
// A million buckets give a resolution of 0.0001% of traffic, far below what an
// experiment can measure, and keep a map and its rebalancing cheap.
//
// # Allocation
//
// An allocation is an ordered list of slices {variant, weight}. Weights are
// relative (they need not sum to 100). Rules: at least one slice; every variant
// name non-empty and distinct; every weight a finite number >= 0; the sum of
// weights > 0.
//
// Weights become bucket counts by the largest-remainder method, computed in
// exact rational arithmetic on the float64 values of the weights (every
// float64 is an exact binary fraction; Python: fractions.Fraction(weight)), so
// that no rounding can differ between implementations:
//
//	quota_i     = weight_i * bucket_count / sum(weights)
//	count_i     = floor(quota_i)
//	remainder_i = quota_i - count_i
//	leftover    = bucket_count - sum(count_i)
//
// The leftover buckets go one each to the slices with the largest remainder;
// among equal remainders the slice earlier in the allocation wins. Since the
// leftover is smaller than the number of slices with a positive remainder, a
// weight-0 variant always gets 0 buckets. A variant with a tiny positive
// weight can also get 0 buckets when bucket_count is small; it then receives
// no traffic.
//
// # Bucket map
//
// A Map is a list of ranges {variant, start, end}, each covering the buckets
// [start, end). A map is canonical when: it is sorted by start, starts at 0,
// has no gaps or overlaps, ends at bucket_count, has no empty range, has no
// empty variant name, and no two adjacent ranges name the same variant (they
// are merged). Every function here returns canonical maps and Validate
// rejects any other. Variants with 0 buckets do not appear in a map.
//
// Version 1 of an experiment (InitialMap): the counts above laid out as
// contiguous ranges in allocation order, starting at bucket 0.
//
// # Rebalancing on a new config version
//
// Rebalance(old map, new allocation) moves the fewest buckets possible:
//
//  1. target_v = the largest-remainder count of variant v in the new
//     allocation (0 for a variant the new allocation drops).
//  2. Each variant keeps its lowest-numbered min(old_v, target_v) buckets. A
//     shrinking variant therefore gives up its highest-numbered buckets; a
//     dropped variant gives up all of its buckets.
//  3. The freed buckets, taken in ascending order, go to the growing and new
//     variants in allocation order, each taking target_v - min(old_v, target_v)
//     of them.
//  4. The result is written in canonical form.
//
// Consequences: a version that keeps the weights (or scales them all by the
// same factor) keeps the map unchanged; a weight change moves exactly
// sum(max(0, old_v - target_v)) buckets, and never a bucket out of a variant
// that does not shrink. bucket_count is frozen for an experiment's life:
// Rebalance rejects an old map that does not cover the given bucket_count.
//
// # Lookup
//
// Lookup finds the range holding a bucket by binary search over the range
// starts, without allocating. A bucket outside [0, bucket_count) has no
// variant (ok == false; null in the vector file).
package bucketing
