package bucketing

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// Bounds on bucket_count; doc.go explains the choice.
const (
	MinBucketCount = 1
	MaxBucketCount = 1_000_000
)

// Bucket returns the bucket of userID in an experiment:
// the first 8 bytes of SHA-256(experimentID + "." + salt + "." + userID),
// big-endian, modulo bucketCount. It never allocates. Callers validate
// bucketCount first; a bucketCount of 0 yields 0 rather than a panic.
func Bucket(experimentID, salt, userID string, bucketCount uint32) uint32 {
	d := Digest(experimentID, salt, userID)
	return BucketOfDigest(&d, bucketCount)
}

// Digest is SHA-256(experimentID + "." + salt + "." + userID): its first 8
// bytes give the bucket, the next 8 the sticky filter positions (doc.go).
// It never allocates.
func Digest(experimentID, salt, userID string) [sha256.Size]byte {
	digest := sha256.New()
	// Strings are copied through a stack buffer so that hashing them needs
	// neither a concatenated string nor a []byte conversion on the heap.
	var chunk [128]byte
	writeString(digest, chunk[:], experimentID)
	writeString(digest, chunk[:], ".")
	writeString(digest, chunk[:], salt)
	writeString(digest, chunk[:], ".")
	writeString(digest, chunk[:], userID)
	var sum [sha256.Size]byte
	digest.Sum(sum[:0])
	return sum
}

// BucketOfDigest is the bucket of a digest: its first 8 bytes, big-endian,
// modulo bucketCount (0 for a bucketCount of 0 rather than a panic).
func BucketOfDigest(d *[sha256.Size]byte, bucketCount uint32) uint32 {
	if bucketCount == 0 {
		return 0
	}
	return uint32(binary.BigEndian.Uint64(d[:8]) % uint64(bucketCount))
}

func writeString(digest hash.Hash, chunk []byte, s string) {
	for len(s) > 0 {
		n := copy(chunk, s)
		digest.Write(chunk[:n]) // a hash.Hash Write never fails
		s = s[n:]
	}
}
