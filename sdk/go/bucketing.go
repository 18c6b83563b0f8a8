package expd

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
)

// digest is SHA-256(experiment_id + "." + salt + "." + user_id); prefix is
// the first two parts with their dots. Short ids are hashed from a stack
// buffer, so the common case does not allocate.
func digest(prefix, userID string) [sha256.Size]byte {
	var buf [192]byte
	if len(prefix)+len(userID) <= len(buf) {
		n := copy(buf[:], prefix)
		n += copy(buf[n:], userID)
		return sha256.Sum256(buf[:n])
	}
	h := sha256.New()
	h.Write([]byte(prefix))
	h.Write([]byte(userID))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

func bucketOfDigest(d *[sha256.Size]byte, bucketCount uint32) uint32 {
	return uint32(binary.BigEndian.Uint64(d[:8]) % uint64(bucketCount))
}

// Bucket is the user's bucket in [0, bucketCount): the first 8 bytes of
// SHA-256(experimentID + "." + salt + "." + userID), big-endian, modulo
// bucketCount (the server's bucketing/doc.go).
func Bucket(experimentID, salt, userID string, bucketCount uint32) uint32 {
	d := digest(experimentID+"."+salt+".", userID)
	return bucketOfDigest(&d, bucketCount)
}

// Range gives the buckets [Start, End) to Variant.
type Range struct {
	Variant string `json:"variant"`
	Start   uint32 `json:"start"`
	End     uint32 `json:"end"`
}

// BucketMap is a bucket map sorted by Start.
type BucketMap []Range

// NewBucketMap sorts ranges by start.
func NewBucketMap(ranges []Range) BucketMap {
	m := append(BucketMap(nil), ranges...)
	sort.Slice(m, func(i, j int) bool { return m[i].Start < m[j].Start })
	return m
}

// Lookup returns the variant whose range holds bucket.
func (m BucketMap) Lookup(bucket uint32) (string, bool) {
	i := sort.Search(len(m), func(i int) bool { return m[i].Start > bucket })
	if i == 0 || bucket >= m[i-1].End {
		return "", false
	}
	return m[i-1].Variant, true
}

// StickyFilter is a Bloom filter of users pinned to Variant before a weight change.
type StickyFilter struct {
	Variant string `json:"variant"`
	Bits    uint32 `json:"bits"`
	Hashes  uint32 `json:"hashes"`
	Data    []byte `json:"data"`
}

// Sticky is the sticky part of an experiment's config (bucketing/doc.go).
// Assigned holds every pinned user of a targeted experiment: they stay in
// when the targeting or their attributes change.
type Sticky struct {
	Filters    []StickyFilter    `json:"filters"`
	Exceptions map[string]string `json:"exceptions"`
	Assigned   *StickyFilter     `json:"assigned"`
}

func (s *Sticky) validate() error {
	for _, f := range s.Filters {
		if !f.valid() {
			return fmt.Errorf("sticky filter of %q: bad size", f.Variant)
		}
	}
	if s.Assigned != nil && !s.Assigned.valid() {
		return fmt.Errorf("sticky assigned filter: bad size")
	}
	return nil
}

func (f *StickyFilter) valid() bool {
	return f.Bits != 0 && f.Hashes != 0 && uint64(len(f.Data))*8 >= uint64(f.Bits)
}

// has tells whether the filter holds the user with digest d.
func (f *StickyFilter) has(d *[sha256.Size]byte) bool {
	h1 := uint64(binary.BigEndian.Uint32(d[8:12]))
	h2 := uint64(binary.BigEndian.Uint32(d[12:16]) | 1)
	for k := uint64(0); k < uint64(f.Hashes); k++ {
		bit := (h1 + k*h2) % uint64(f.Bits)
		if f.Data[bit>>3]&(1<<(bit&7)) == 0 {
			return false
		}
	}
	return true
}

// wasAssigned tells whether the assigned filter holds the user.
func (s *Sticky) wasAssigned(d *[sha256.Size]byte) bool {
	return s != nil && s.Assigned != nil && s.Assigned.has(d)
}

// resolve returns the variant kept for the user with digest d whose bucket
// the map gives to mapped.
func (s *Sticky) resolve(d *[sha256.Size]byte, mapped string) string {
	if s == nil {
		return mapped
	}
	if len(s.Exceptions) > 0 {
		var key [16]byte
		hex.Encode(key[:], d[8:16])
		if v, ok := s.Exceptions[string(key[:])]; ok {
			return v
		}
	}
	for i := range s.Filters {
		if f := &s.Filters[i]; f.Variant != mapped && f.has(d) {
			return f.Variant
		}
	}
	return mapped
}
