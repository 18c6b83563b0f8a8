package bucketing

import (
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"testing"
)

// concatenatedBucket is the formula of doc.go written the obvious way, with
// a concatenated string, to check the allocation-free Bucket against.
func concatenatedBucket(experimentID, salt, userID string, bucketCount uint32) uint32 {
	sum := sha256.Sum256([]byte(experimentID + "." + salt + "." + userID))
	return uint32(binary.BigEndian.Uint64(sum[:8]) % uint64(bucketCount))
}

func TestBucketMatchesConcatenatedHash(t *testing.T) {
	// Lengths around the 128-byte copy chunk catch off-by-one chunking.
	userIDs := []string{"", "u", "ユーザー", "naïve", "👩‍💻",
		strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129), strings.Repeat("ü", 300)}
	for _, userID := range userIDs {
		for _, n := range []uint32{1, 2, 10000, 999983, MaxBucketCount} {
			got := Bucket("exp", strings.Repeat("s", 130), userID, n)
			if want := concatenatedBucket("exp", strings.Repeat("s", 130), userID, n); got != want {
				t.Errorf("Bucket(user %q, %d) = %d, want %d", userID, n, got, want)
			}
			if got >= n {
				t.Errorf("Bucket(user %q, %d) = %d, outside [0, %d)", userID, n, got, n)
			}
		}
	}
}

func TestBucketDependsOnEveryInput(t *testing.T) {
	type inputs struct{ experimentID, salt, userID string }
	base := inputs{"exp", "salt", "naïve"}
	for name, changed := range map[string]inputs{
		"experiment":            {"exp2", "salt", "naïve"},
		"salt":                  {"exp", "salt2", "naïve"},
		"user":                  {"exp", "salt", "naive"},
		"unicode normalization": {"exp", "salt", "nai\u0308ve"},
	} {
		b := Bucket(base.experimentID, base.salt, base.userID, MaxBucketCount)
		if c := Bucket(changed.experimentID, changed.salt, changed.userID, MaxBucketCount); c == b {
			t.Errorf("changing the %s left the bucket at %d", name, b)
		}
	}
}

func TestBucketZeroCountIsZeroNotPanic(t *testing.T) {
	if got := Bucket("exp", "salt", "user", 0); got != 0 {
		t.Errorf("Bucket with bucketCount 0 = %d, want 0", got)
	}
}

func TestBucketDoesNotAllocate(t *testing.T) {
	long := strings.Repeat("ユーザー", 100)
	allocs := testing.AllocsPerRun(100, func() { Bucket("0b9d4c1e-8f3a-4c2b-9e61-7d2f5a8b3c10", "k3J9x2pQ", long, 10000) })
	if allocs != 0 {
		t.Errorf("Bucket allocates %.1f times per call, want 0", allocs)
	}
}
