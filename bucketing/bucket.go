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
	if bucketCount == 0 {
		return 0
	}
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
	return uint32(binary.BigEndian.Uint64(sum[:8]) % uint64(bucketCount))
}

func writeString(digest hash.Hash, chunk []byte, s string) {
	for len(s) > 0 {
		n := copy(chunk, s)
		digest.Write(chunk[:n]) // a hash.Hash Write never fails
		s = s[n:]
	}
}
