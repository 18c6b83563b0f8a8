package api_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/internal/testenv"
)

// The properties over 100,000 users, on the bucket maps that
// GET /v1/config serves after each PUT (what every SDK assigns from).
const propertyUsers = 100_000

// population assigns every property user with the experiment's served map.
type population struct {
	id, salt string
	count    uint32
	buckets  []uint32
}

func newPopulation(id, salt string, count uint32) population {
	p := population{id: id, salt: salt, count: count, buckets: make([]uint32, propertyUsers)}
	for i := range p.buckets {
		p.buckets[i] = bucketing.Bucket(id, salt, fmt.Sprintf("user-%d", i), count)
	}
	return p
}

func (p population) assign(t *testing.T, m bucketing.Map) []string {
	t.Helper()
	out := make([]string, len(p.buckets))
	for i, b := range p.buckets {
		v, ok := m.Lookup(b)
		if !ok {
			t.Fatalf("user-%d (bucket %d) has no variant in %v", i, b, m)
		}
		out[i] = v
	}
	return out
}

// servedMap returns the experiment's map from GET /v1/config once it shows
// config_version want (the cache may serve the previous one briefly).
func servedMap(t *testing.T, env *testenv.Env, org testenv.Org, want int64) bucketing.Map {
	t.Helper()
	waitFor(t, func() bool { return decodeConfig(t, getConfig(t, env, org.SecretKey)).ConfigVersion == want })
	return decodeConfig(t, getConfig(t, env, org.SecretKey)).Experiments[0].BucketMap
}

func shares(variants []string) map[string]float64 {
	out := map[string]float64{}
	for _, v := range variants {
		out[v] += 1 / float64(len(variants))
	}
	return out
}

type move struct{ from, to string }

func moves(before, after []string) map[move]int {
	out := map[move]int{}
	for i := range before {
		if before[i] != after[i] {
			out[move{before[i], after[i]}]++
		}
	}
	return out
}

func movedBuckets(t *testing.T, before, after bucketing.Map, count uint32) int {
	t.Helper()
	n := 0
	for b := uint32(0); b < count; b++ {
		x, _ := before.Lookup(b)
		y, _ := after.Lookup(b)
		if x != y {
			n++
		}
	}
	return n
}

func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestBucketMapPropertiesThroughTheAPI(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	exp := create(t, env, org, validConfig("props"))
	pop := newPopulation(exp.ID, "k3J9x2pQ", 10000)

	v1 := pop.assign(t, servedMap(t, env, org, 1))
	for variant, share := range shares(v1) {
		if !within(share, 0.5, 0.01) {
			t.Fatalf("v1 share of %s = %.4f, want 0.50 ± 0.01", variant, share)
		}
	}

	// Only prompt text changes: nobody moves.
	cfg := validConfig("props")
	cfg["variants"].(map[string]any)["concise"] = map[string]any{"prompt": "Answer in one sentence."}
	putConfig(t, env, org, exp.ID, cfg)
	v2 := pop.assign(t, servedMap(t, env, org, 2))
	if m := moves(v1, v2); len(m) != 0 {
		t.Fatalf("a prompt-only change moved users: %v", m)
	}

	// 50/50 -> 60/40: about 10% move, all into the growing control.
	cfg["allocation"] = allocation("control", 60, "concise", 40)
	putConfig(t, env, org, exp.ID, cfg)
	map3 := servedMap(t, env, org, 3)
	v3 := pop.assign(t, map3)
	m := moves(v2, v3)
	if len(m) != 1 || !within(float64(m[move{"concise", "control"}])/propertyUsers, 0.10, 0.01) {
		t.Fatalf("50/50 -> 60/40 moves %v, want about 10%% of users, concise -> control only", m)
	}
	for variant, want := range map[string]float64{"control": 0.6, "concise": 0.4} {
		if got := shares(v3)[variant]; !within(got, want, 0.01) {
			t.Fatalf("60/40 share of %s = %.4f", variant, got)
		}
	}

	// A third variant at 40/30/30: only the existing arms give users, only
	// to the new arm, and no more than the buckets they shrink by.
	cfg["allocation"] = allocation("control", 40, "concise", 30, "bullets", 30)
	putConfig(t, env, org, exp.ID, cfg)
	map4 := servedMap(t, env, org, 4)
	if n := movedBuckets(t, map3, map4, 10000); n != 3000 {
		t.Fatalf("adding a variant moved %d buckets, want the minimal 3000", n)
	}
	v4 := pop.assign(t, map4)
	m = moves(v3, v4)
	for mv, n := range m {
		if mv.to != "bullets" {
			t.Fatalf("adding a variant moved %d users %s -> %s", n, mv.from, mv.to)
		}
	}
	// Minimal count: control 6000 -> 4000 and concise 4000 -> 3000 buckets
	// free 3000 of 10000 buckets, 30% of users.
	if moved := m[move{"control", "bullets"}] + m[move{"concise", "bullets"}]; !within(float64(moved)/propertyUsers, 0.30, 0.01) {
		t.Fatalf("adding a variant moved %d users (%v), want about 30%%", moved, m)
	}
	for variant, want := range map[string]float64{"control": 0.4, "concise": 0.3, "bullets": 0.3} {
		if got := shares(v4)[variant]; !within(got, want, 0.01) {
			t.Fatalf("40/30/30 share of %s = %.4f", variant, got)
		}
	}
}
