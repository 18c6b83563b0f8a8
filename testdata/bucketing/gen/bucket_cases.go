package main

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/testdata/bucketing/vectors"
)

var (
	experimentIDs = []string{
		"0b9d4c1e-8f3a-4c2b-9e61-7d2f5a8b3c10",
		"f47ac10b-58cc-4372-a567-0e02b2c3d479",
		"exp-1",
		"a.b", // dots in an id: the separator is not escaped
		"実験-7",
		strings.Repeat("e", 300),
		"",
	}
	salts = []string{"k3J9x2pQ", "s", "salt.with.dots", "🧂", strings.Repeat("S", 200), ""}

	bucketCounts = []uint32{bucketing.MinBucketCount, 2, 3, 7, 10, 100, 1000, 10000, 65536, 999983, bucketing.MaxBucketCount}

	// Users that trip up naive implementations: empty and blank ids,
	// non-ASCII, precomposed vs decomposed forms, emoji sequences, control
	// characters, and ids longer than any buffer.
	edgeUserIDs = []string{
		"", " ", "0", "007", "user-1", "USER-1", "a.b.c", "user@example.com",
		"ユーザー", "naïve", "nai\u0308ve", "é", "e\u0301", "Ελληνικά", "עברית",
		"😀", "👩‍💻", "🇯🇵", "tab\tnew\nline", `quote"back\slash`, "\u0000", "\uFEFFbom",
		strings.Repeat("x", 1000), strings.Repeat("ü", 500),
	}
)

// bucketCases: every edge user at every bucket count, every experiment and
// salt pairing, then ordinary users spread over all inputs.
func bucketCases() []vectors.BucketCase {
	var cases []vectors.BucketCase
	add := func(experimentID, salt, userID string, bucketCount uint32) {
		cases = append(cases, vectors.BucketCase{
			ExperimentID: experimentID, Salt: salt, BucketCount: bucketCount, UserID: userID,
			Bucket: bucketing.Bucket(experimentID, salt, userID, bucketCount),
		})
	}
	for _, userID := range edgeUserIDs {
		for _, n := range bucketCounts {
			add(experimentIDs[0], salts[0], userID, n)
		}
	}
	for _, experimentID := range experimentIDs {
		for _, salt := range salts {
			add(experimentID, salt, "user-42", 10000)
			add(experimentID, salt, "ユーザー", bucketing.MaxBucketCount)
		}
	}
	rng := rand.New(rand.NewPCG(3, 14))
	for i := range 1000 {
		userID := fmt.Sprintf("user-%d", i)
		if i%2 == 1 {
			userID = fmt.Sprintf("%016x", rng.Uint64())
		}
		add(experimentIDs[i%len(experimentIDs)], salts[i%len(salts)], userID, bucketCounts[i%len(bucketCounts)])
	}
	return cases
}
