package bucketing

import (
	"fmt"
	"strings"
	"testing"
)

var (
	sinkBucket  uint32
	sinkVariant string
)

func BenchmarkBucket(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkBucket = Bucket("0b9d4c1e-8f3a-4c2b-9e61-7d2f5a8b3c10", "k3J9x2pQ", "user-1234567", 10000)
	}
}

func BenchmarkBucketLongUserID(b *testing.B) {
	long := strings.Repeat("ユーザー", 100) // 1,200 bytes
	b.ReportAllocs()
	for b.Loop() {
		sinkBucket = Bucket("0b9d4c1e-8f3a-4c2b-9e61-7d2f5a8b3c10", "k3J9x2pQ", long, 10000)
	}
}

func BenchmarkLookup(b *testing.B) {
	two := Map{{"control", 0, 5000}, {"concise", 5000, 10000}}
	// A long-lived experiment's map: 40 versions of changing weights.
	weights := []float64{5, 3, 2}
	many := Map{{"a", 0, 10000}}
	for i := range 40 {
		weights[i%3] += float64(1 + i%7)
		next, err := Rebalance(many, slicesOf("a,b,c", weights...), 10000)
		if err != nil {
			b.Fatal(err)
		}
		many = next
	}
	for _, bm := range []struct {
		name string
		m    Map
	}{{"ranges=2", two}, {fmt.Sprintf("ranges=%d", len(many)), many}} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			bucket := uint32(0)
			for b.Loop() {
				sinkVariant, _ = bm.m.Lookup(bucket)
				bucket = (bucket + 7919) % 10000
			}
		})
	}
}

func BenchmarkBucketAndLookup(b *testing.B) {
	m := Map{{"control", 0, 5000}, {"concise", 5000, 10000}}
	b.ReportAllocs()
	for b.Loop() {
		sinkVariant, _ = m.Lookup(Bucket("0b9d4c1e-8f3a-4c2b-9e61-7d2f5a8b3c10", "k3J9x2pQ", "user-1234567", 10000))
	}
}

func BenchmarkRebalance(b *testing.B) {
	old, err := InitialMap(slicesOf("control,concise", 50, 50), MaxBucketCount)
	if err != nil {
		b.Fatal(err)
	}
	alloc := slicesOf("control,concise,verbose", 34, 33, 33)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Rebalance(old, alloc, MaxBucketCount); err != nil {
			b.Fatal(err)
		}
	}
}
