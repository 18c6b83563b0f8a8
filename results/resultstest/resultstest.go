// Package resultstest builds synthetic experiments with a known effect for
// the results pipeline's tests: users with their events, the config that
// measures them, and the per-user values computed in Go, independently of
// the SQL aggregation under test.
package resultstest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// The synthetic experiment's true effects, treatment minus control.
const (
	BaseLatencyMs       = 200.0
	LatencyEffectMs     = 20.0
	LatencyNoiseMs      = 30.0
	CallsPerUser        = 3
	ControlConversion   = 0.2
	TreatmentConversion = 0.3
)

// Arms of the synthetic experiment, control first.
var Arms = []string{"control", "treatment"}

// User is one synthetic user and what they did.
type User struct {
	ID        string
	Variant   string
	Latencies []float64
	Converted bool
	Revenue   float64
}

// Users builds perArm users in each arm, deterministically from seed.
func Users(perArm int, seed uint64) []User {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []User
	for armIndex, arm := range Arms {
		effect, conversion := 0.0, ControlConversion
		if armIndex > 0 {
			effect, conversion = LatencyEffectMs, TreatmentConversion
		}
		for i := range perArm {
			u := User{ID: fmt.Sprintf("u-%d-%s-%d", seed, arm, i), Variant: arm}
			for range CallsPerUser {
				u.Latencies = append(u.Latencies, BaseLatencyMs+effect+rng.NormFloat64()*LatencyNoiseMs)
			}
			if rng.Float64() < conversion {
				u.Converted, u.Revenue = true, 10+40*rng.Float64()
			}
			out = append(out, u)
		}
	}
	return out
}

// Metrics measured by Config: built-ins listed without a source, so the
// catalogue supplies it.
var Metrics = []string{"latency_ms", "conversion", "revenue"}

// Config is an experiment config measuring Metrics over Arms, 50/50.
func Config(name string) experiments.Config {
	shared := false
	ms := []experiments.Metric{
		{Name: "latency_ms", Kind: vocab.Mean, Category: "guardrail", MethodDefault: string(stats.WelchT), MetricVersion: 1, SharedOrgWide: &shared},
		{Name: "conversion", Kind: vocab.Proportion, Category: "primary", MethodDefault: string(stats.ZTest), MetricVersion: 1, SharedOrgWide: &shared},
		{Name: "revenue", Kind: vocab.Sum, Category: "secondary", MethodDefault: string(stats.WelchT), MetricVersion: 1, SharedOrgWide: &shared},
	}
	return experiments.Config{
		Name: name, Salt: "resultstest-salt", BucketCount: 1000,
		Allocation: []bucketing.Slice{{Variant: Arms[0], Weight: 50}, {Variant: Arms[1], Weight: 50}},
		Metrics:    ms,
	}
}

// Values returns each arm's per-user values of a metric of Config,
// computed from the users directly.
func Values(users []User, metric string) map[string][]float64 {
	out := map[string][]float64{}
	for _, u := range users {
		var v float64
		switch metric {
		case "latency_ms":
			for _, l := range u.Latencies {
				v += l
			}
			v /= float64(len(u.Latencies))
		case "conversion":
			if u.Converted {
				v = 1
			}
		case "revenue":
			v = u.Revenue
		default:
			panic("resultstest: unknown metric " + metric)
		}
		out[u.Variant] = append(out[u.Variant], v)
	}
	return out
}

// Events are the users' events: an exposure at `at`, then the model calls
// and, for converted users, a conversion and a revenue event, each a
// millisecond apart.
func Events(orgID, experimentID string, users []User, at time.Time) []ingest.EventRow {
	var out []ingest.EventRow
	for _, u := range users {
		t, seq := at, 0
		next := func(typ vocab.RecordType) ingest.EventRow {
			t, seq = t.Add(time.Millisecond), seq+1
			return ingest.EventRow{OrgID: orgID, EventID: fmt.Sprintf("%s-%s-%d", experimentID, u.ID, seq), Type: typ, ExperimentID: experimentID,
				UserID: u.ID, Variant: u.Variant, Ts: t.UTC(), ReceivedAt: t.UTC(), Source: "api"}
		}
		out = append(out, next(vocab.TypeExposure))
		for _, l := range u.Latencies {
			e := next(vocab.TypeModelCall)
			e.LatencyMs = &l
			out = append(out, e)
		}
		if u.Converted {
			conv, rev := next(vocab.TypeBusinessEvent), next(vocab.TypeBusinessEvent)
			one, revenue, convName, revName := 1.0, u.Revenue, "conversion", "revenue"
			conv.BusinessMetric, conv.Value = &convName, &one
			rev.BusinessMetric, rev.Value = &revName, &revenue
			out = append(out, conv, rev)
		}
	}
	return out
}

// Wire is an event as POST /v1/events takes it.
func Wire(e ingest.EventRow) map[string]any {
	m := map[string]any{
		"event_id": e.EventID, "type": e.Type, "experiment_id": e.ExperimentID, "user_id": e.UserID,
		"variant": e.Variant, "timestamp": e.Ts.Format(time.RFC3339Nano),
	}
	if e.LatencyMs != nil {
		m["latency_ms"] = *e.LatencyMs
	}
	if e.BusinessMetric != nil {
		m["business_metric"], m["value"] = *e.BusinessMetric, *e.Value
	}
	return m
}

// Insert writes events straight into the events table.
func Insert(t testing.TB, db *gorm.DB, events []ingest.EventRow) {
	t.Helper()
	if err := db.CreateInBatches(events, 500).Error; err != nil {
		t.Fatalf("insert %d events: %v", len(events), err)
	}
	if database.IsPostgres(db) {
		// A run right after a bulk insert, before autovacuum's analyze,
		// is planned as if the partitions were empty: a nested loop that
		// scans the whole partition once per exposed user (a test with
		// 90,000 events ran for 14 minutes that way on a loaded machine).
		if err := db.Exec("ANALYZE events").Error; err != nil {
			t.Fatalf("analyze events: %v", err)
		}
	}
}

// Experiment creates an experiment of cfg (Config, or a variation of it)
// in an existing org through the experiments store and returns it.
func Experiment(t testing.TB, db *gorm.DB, orgID string, cfg experiments.Config) experiments.Experiment {
	t.Helper()
	exp, err := experiments.Store{DB: db}.Create(t.Context(), orgID, "resultstest", cfg)
	if err != nil {
		t.Fatalf("create experiment: %v", err)
	}
	return exp
}

// Backdate moves an experiment's start (and its versions) back by d, as if
// it had been created earlier.
func Backdate(t testing.TB, db *gorm.DB, experimentID string, d time.Duration) {
	t.Helper()
	var exp experiments.Row
	if err := db.Where("id = ?", experimentID).Take(&exp).Error; err != nil {
		t.Fatal(err)
	}
	start := exp.CreatedAt.Add(-d)
	if err := db.Model(&experiments.Row{}).Where("id = ?", experimentID).Update("created_at", start).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Model(&experiments.VersionRow{}).Where("experiment_id = ?", experimentID).Update("created_at", start).Error; err != nil {
		t.Fatal(err)
	}
}

// Ramp moves an experiment's history to [start, now): version 1 (and the
// experiment's creation) at start, then a new version with alloc at
// change, as if its weights had been changed then.
func Ramp(t testing.TB, db *gorm.DB, orgID string, exp experiments.Experiment, start, change time.Time, alloc []bucketing.Slice) experiments.Experiment {
	t.Helper()
	cfg := exp.Config
	cfg.Allocation = alloc
	next, err := experiments.Store{DB: db}.Update(t.Context(), orgID, exp.ID, "resultstest", cfg)
	if err != nil {
		t.Fatalf("change the allocation: %v", err)
	}
	if err := db.Model(&experiments.Row{}).Where("id = ?", exp.ID).Update("created_at", start.UTC()).Error; err != nil {
		t.Fatal(err)
	}
	for v, at := range map[int]time.Time{exp.Version: start, next.Version: change} {
		if err := db.Model(&experiments.VersionRow{}).Where("experiment_id = ? AND version = ?", exp.ID, v).Update("created_at", at.UTC()).Error; err != nil {
			t.Fatal(err)
		}
	}
	return next
}

// PhasedExposures are the exposures of users first exposed over each
// phase [bounds[k], bounds[k+1]), n[k] of them, evenly spread, each
// assigned at random (seeded) by that phase's weights; every fifth user
// of a phase comes back in the next one, in the same arm. drop, when set,
// loses a user's exposures (an arm's exposures lost in a phase).
func PhasedExposures(orgID, experimentID string, seed uint64, bounds []time.Time, n []int, allocs [][]bucketing.Slice, drop func(phase int, variant string, i int) bool) []ingest.EventRow {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []ingest.EventRow
	exposure := func(id, user, variant string, ts time.Time) ingest.EventRow {
		return ingest.EventRow{OrgID: orgID, EventID: experimentID + "-" + id, Type: vocab.TypeExposure, ExperimentID: experimentID, UserID: user,
			Variant: variant, Ts: ts.UTC(), ReceivedAt: ts.UTC(), Source: ingest.SourceAPI}
	}
	for k := range n {
		span := bounds[k+1].Sub(bounds[k])
		var total float64
		for _, s := range allocs[k] {
			total += s.Weight
		}
		for i := range n[k] {
			variant, x := allocs[k][len(allocs[k])-1].Variant, rng.Float64()*total
			for _, s := range allocs[k] {
				if x < s.Weight {
					variant = s.Variant
					break
				}
				x -= s.Weight
			}
			if drop != nil && drop(k, variant, i) {
				continue
			}
			user := fmt.Sprintf("p%d-%d", k, i)
			frac := (float64(i) + 0.5) / float64(n[k])
			out = append(out, exposure(user+"-x", user, variant, bounds[k].Add(time.Duration(float64(span)*frac)).Truncate(time.Millisecond)))
			if i%5 == 0 && k+1 < len(n) {
				back := bounds[k+1].Add(time.Duration(float64(bounds[k+2].Sub(bounds[k+1])) * frac)).Truncate(time.Millisecond)
				out = append(out, exposure(user+"-back", user, variant, back))
			}
		}
	}
	return out
}
