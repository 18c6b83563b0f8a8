package bucketing_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/testdata/conformance/scenario"
)

// The committed conformance scenario is what the rules make of it now.
func TestConformanceScenarioIsFresh(t *testing.T) {
	f, err := scenario.Build()
	if err != nil {
		t.Fatal(err)
	}
	want, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../testdata/conformance/scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("testdata/conformance/scenario.json is stale: run go generate ./bucketing")
	}
}

// 100,000 pinned users through 50/50 -> 60/40: none moves, and the false
// positives among 100,000 new users stay near the stated rate.
func TestStickyKeepsEveryPinnedUser(t *testing.T) {
	const id, salt, buckets = "e1", "s", 10_000
	before, _ := bucketing.InitialMap([]bucketing.Slice{{Variant: "a", Weight: 50}, {Variant: "b", Weight: 50}}, buckets)
	after, err := bucketing.Rebalance(before, []bucketing.Slice{{Variant: "a", Weight: 60}, {Variant: "b", Weight: 40}}, buckets)
	if err != nil {
		t.Fatal(err)
	}
	pins := make([]bucketing.PinnedUser, 100_000)
	for i := range pins {
		u := fmt.Sprintf("pinned-%d", i)
		v, _ := before.Lookup(bucketing.Bucket(id, salt, u, buckets))
		pins[i] = bucketing.PinnedUser{UserID: u, Variant: v}
	}
	s := bucketing.BuildSticky(id, salt, buckets, after, func(string) bool { return true }, pins)
	if s == nil || len(s.Filters) != 1 || s.Filters[0].Variant != "b" || !s.Valid() {
		t.Fatalf("want one valid filter of b, got %+v", s)
	}
	resolve := func(u string) (string, string) {
		d := bucketing.Digest(id, salt, u)
		mapped, _ := after.Lookup(bucketing.BucketOfDigest(&d, buckets))
		return s.Resolve(&d, mapped), mapped
	}
	members := 0
	for _, p := range pins {
		got, mapped := resolve(p.UserID)
		if got != p.Variant {
			t.Fatalf("pinned %s moved from %s to %s", p.UserID, p.Variant, got)
		}
		if mapped != p.Variant {
			members++
		}
	}
	falsePositives, checked := 0, 0
	for i := range 100_000 {
		got, mapped := resolve(fmt.Sprintf("new-%d", i))
		if mapped == "a" {
			checked++
			if got != mapped {
				falsePositives++
			}
		}
	}
	rate := float64(falsePositives) / float64(checked)
	t.Logf("members %d, filter %d bytes, exceptions %d, false positives %d of %d checked (%.4f%%)",
		members, len(s.Filters[0].Data), len(s.Exceptions), falsePositives, checked, 100*rate)
	if members < 9_000 || members > 11_000 {
		t.Fatalf("members %d, want about 10%% of 100,000", members)
	}
	if rate > 0.002 {
		t.Fatalf("false-positive rate %.4f, want about 0.001", rate)
	}
}

// Pins to a variant the allocation no longer has are ignored, and with
// nothing to keep there is no sticky part at all.
func TestStickyIgnoresDroppedVariants(t *testing.T) {
	m := bucketing.Map{{Variant: "a", Start: 0, End: 10}}
	pins := []bucketing.PinnedUser{{UserID: "u1", Variant: "gone"}, {UserID: "u2", Variant: "a"}}
	if s := bucketing.BuildSticky("e", "s", 10, m, func(v string) bool { return v == "a" }, pins); s != nil {
		t.Fatalf("want nil, got %+v", s)
	}
	var none *bucketing.Sticky
	d := bucketing.Digest("e", "s", "u1")
	if got := none.Resolve(&d, "a"); got != "a" {
		t.Fatalf("nil sticky: got %s", got)
	}
}

// Building the sticky part of a 100,000-pin experiment after 50/50 -> 60/40.
func BenchmarkBuildSticky(b *testing.B) {
	const id, salt, buckets = "e1", "s", 10_000
	before, _ := bucketing.InitialMap([]bucketing.Slice{{Variant: "a", Weight: 50}, {Variant: "b", Weight: 50}}, buckets)
	after, _ := bucketing.Rebalance(before, []bucketing.Slice{{Variant: "a", Weight: 60}, {Variant: "b", Weight: 40}}, buckets)
	pins := make([]bucketing.PinnedUser, 100_000)
	for i := range pins {
		u := fmt.Sprintf("pinned-%d", i)
		v, _ := before.Lookup(bucketing.Bucket(id, salt, u, buckets))
		pins[i] = bucketing.PinnedUser{UserID: u, Variant: v}
	}
	b.ReportAllocs()
	for b.Loop() {
		bucketing.BuildSticky(id, salt, buckets, after, func(string) bool { return true }, pins)
	}
}
