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
//
// # Decision
//
// Evaluate turns one experiment of a config version, a user (their id,
// their attributes and, on the server, their stored pin) into a variant,
// whether the user is in the experiment (counted by its analysis), and a
// reason code. Every client applies the same rules, in this order:
//
//  1. lifecycle: an experiment that is not running serves one range of one
//     variant; the user gets it, outside the experiment, with not_running
//     (draft, scheduled, stopped: control) or shipped (the shipped variant);
//  2. holdout, layer, then targeting; each gives control, outside the
//     experiment: holdout when one of the experiment's holdouts holds the
//     user out, layer when the user's bucket in the experiment's layer
//     lies outside the experiment's range of it, not_targeted when the
//     attributes do not match the condition. A user the assigned filter or
//     a stored pin holds skips the holdout and targeting steps (a pinned
//     user keeps their variant), never the layer step (ranges never move);
//  3. sticky filters and stored pin: the user is in the experiment; the
//     sticky filters' answer (below), replaced by the stored pin when the
//     current allocation still has its variant;
//  4. bucket: the reason is pinned when step 3 gave a variant other than the
//     bucket map's, bucketed otherwise.
//
// Stored pins equal to the bucket's variant thus read bucketed, so the
// server and a client (which sees pins only through the sticky filters)
// give every user the same reason. The decisions of
// testdata/conformance/scenario.json pin the rules down for every client.
//
// # Layers and holdouts
//
// A layer and a holdout each have their own id, salt and bucket_count; a
// user's bucket in one is the bucket formula above with the layer's or
// holdout's id and salt in place of the experiment's. An experiment of a
// layer is served a Slot {id, salt, bucket_count, start, end}: its range
// of the layer, as buckets; the user is in the experiment's part of the
// layer when start <= bucket < end. A holdout is served to every
// experiment in its scope as a Slot with start 0: the user is held out
// when bucket < end. The server turns fractions into bucket bounds once
// (BucketOfFraction: rounded to nearest), so clients compare integers
// only.
//
// # Stickiness across weight changes
//
// A weight change moves buckets (above), and with them every user in them.
// Users already assigned are pinned on the server (first /v1/assign or first
// exposure), so /v1/assign keeps them; the clients assign locally, with no
// network call on the request path, so each config version ships what they
// need to keep those users too: the experiment's "sticky" part, built from
// its pins whenever the org's snapshot is rebuilt (sdkcache; only for
// experiments past version 1).
//
//	"sticky": {"filters": [{"variant": "treatment", "bits": 4248, "hashes": 10, "data": "<base64>"}],
//	           "exceptions": {"<16 hex digits>": "control"}}
//
// Rules, identical in every client (Sticky.Resolve):
//
//	digest = SHA-256(experiment_id + "." + salt + "." + user_id)  (bytes 0..8 give the bucket)
//	h1 = big-endian uint32 of digest[8:12], h2 = big-endian uint32 of digest[12:16] | 1
//	mapped = the bucket map's variant
//	1. exceptions[hex(digest[8:16])], if present, is the answer;
//	2. else the first filter, in order, whose variant is not mapped and that
//	   holds the user: every probe i in [0, hashes) has bit (h1 + i*h2) mod
//	   bits set (bit b is data[b/8] & (1 << (b%8)));
//	3. else mapped.
//
// BuildSticky puts in the filter of variant v every user pinned to v whose
// bucket the current map gives to another variant (pins to variants the
// allocation dropped are ignored: those users follow the map), then lists
// as exceptions the pinned users the filters alone would misplace (a false
// positive in another variant's filter). So every pinned user resolves to
// its pin, exactly; and /v1/assign resolves an unpinned user with the same
// rules, so a false positive is the same answer everywhere.
//
// Numbers. 10 probes and 14.4 bits per member give a false-positive rate of
// 0.1 % (measured 0.116 % on 60,000 new users in sticky_test.go). A filter
// costs 180,000 bytes (240,000 base64 characters) per 100,000 members;
// members are only pinned users whose bucket moved: after 50/50 -> 60/40,
// 10 % of the pinned users, so 1,000,000 pinned users cost about 180 KB.
// Exceptions: about 0.05 % of the pinned users (47 of 100,000 measured), 30
// bytes each. A false positive gives a user who was never assigned the older
// variant (0.07 % of new users after 50/50 -> 60/40, consistently in every
// client and /v1/assign), never a pinned user the wrong one. Building reads
// the experiment's pins and hashes each once (BenchmarkBuildSticky).
//
// What remains: the window between a change and a client's next config
// (a poll every 60 s, or within about 1 s after an ingest ack reports the
// newer config_version). In it that client assigns by the old map; users it
// sees for the first time in moved buckets (10 % of them after 50/50 ->
// 60/40) are pinned to the old map's variant by their exposure but are not
// in the new version's filters, so once the client refreshes they follow the
// new map, until the org's next config version includes their pins.
//
// Why not (only) a client-side sticky store, as GrowthBook and Statsig offer
// (a pluggable store remembering each user's first assignment): it needs a
// read per assignment, which is a network call for a server-side store
// (Redis) and per-device state for a browser one, so two clients (a
// TypeScript front end and a Python back end, or two devices) and /v1/assign
// can disagree. Filters shipped with the config keep every client and the
// server on one answer with no client storage; their cost is config size.
package bucketing
