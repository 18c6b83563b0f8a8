// Command calls times the call explorer's read (GET
// /v1/experiments/{id}/calls and the dashboard's calls page: package
// calls) over one experiment with -users users of 8 model calls each
// (1,000,000 calls by default) on PostgreSQL (DATABASE_URL), against the
// events read route's first page (EventStore.Read) as the baseline, in
// the same run. A tenth of the calls carry a judge's helpfulness score.
//
// Each case is read once to warm it, then -reps times; the median is
// reported with its ratio to the baseline's median.
//
// Usage: DATABASE_URL=postgres://... go run ./bench/calls [-users 125000] [-reps 15]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/expd/expd/bench/benchseed"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/calls"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/vocab"
)

func main() {
	users := flag.Int("users", 125_000, "users in the experiment, 8 model calls each")
	reps := flag.Int("reps", 15, "timed reads per case")
	flag.Parse()
	if err := run(*users, *reps); err != nil {
		log.Fatal(err)
	}
}

func run(users, reps int) error {
	ctx := context.Background()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return fmt.Errorf("set DATABASE_URL to a PostgreSQL database")
	}
	db, schema, drop, err := benchseed.OpenSchema(base, false)
	if err != nil {
		return err
	}
	defer drop()
	start := time.Now()
	org, err := orgs.Ensure(ctx, db, "org_bench_calls", "bench-calls")
	if err != nil {
		return err
	}
	shared := false
	cfg := experiments.Config{Name: "calls", Salt: "calls-salt", BucketCount: 10000,
		Allocation: []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}},
		Metrics: []experiments.Metric{{Name: "latency_ms", Kind: vocab.Mean, Category: "guardrail", MethodDefault: "welch_t", MetricVersion: 1,
			SharedOrgWide: &shared, Source: &experiments.MetricSource{EventType: vocab.TypeModelCall, Field: "latency_ms"}}}}
	exp, err := experiments.Store{DB: db}.Create(ctx, org.ID, "bench", cfg)
	if err != nil {
		return err
	}
	began := time.Now().UTC().AddDate(0, 0, -8)
	if err := benchseed.Backdate(ctx, db, exp.ID, began); err != nil {
		return err
	}
	err = benchseed.Generate(ctx, db, benchseed.Events{OrgID: org.ID, ExperimentID: exp.ID, Users: users, PerUser: 10,
		First: began.Add(time.Hour), Days: 7, Spacing: time.Minute})
	if err != nil {
		return err
	}
	err = db.Exec(`INSERT INTO scores (org_id, call_id, name, source, value, ts, received_at, evaluator, evaluator_version, judge_model)
SELECT org_id, event_id, 'helpfulness', 'judge', floor(random() * 5) + 1, ts, ts, 'bench-judge', '1', 'judge-m'
FROM events WHERE experiment_id = ? AND type = 'model_call' AND random() < 0.1`, exp.ID).Error
	if err != nil {
		return fmt.Errorf("seed scores: %w", err)
	}
	if err := db.Exec("VACUUM ANALYZE scores").Error; err != nil {
		return err
	}
	var nCalls, nScores int64
	db.Raw("SELECT count(*) FROM events WHERE type = 'model_call'").Scan(&nCalls)
	db.Raw("SELECT count(*) FROM scores").Scan(&nScores)
	log.Printf("schema %s: %d model calls, %d scores, seeded in %s", schema, nCalls, nScores, time.Since(start).Round(time.Second))

	store := ingest.SQLEvents{DB: db}
	median := func(read func() error) (time.Duration, error) {
		if err := read(); err != nil {
			return 0, err
		}
		ds := make([]time.Duration, reps)
		for i := range ds {
			t := time.Now()
			if err := read(); err != nil {
				return 0, err
			}
			ds[i] = time.Since(t)
		}
		slices.Sort(ds)
		return ds[len(ds)/2], nil
	}
	baseline, err := median(func() error {
		_, err := store.Read(ctx, ingest.ReadFilter{OrgID: org.ID, ExperimentID: exp.ID, Limit: calls.DefaultLimit})
		return err
	})
	if err != nil {
		return err
	}
	first, err := calls.Read(ctx, store, org.ID, exp.ID, calls.Query{Limit: calls.DefaultLimit})
	if err != nil {
		return err
	}
	fmt.Printf("calls=%d scores=%d\n", nCalls, nScores)
	fmt.Printf("%-52s %9s  %s\n", "baseline: events read, first page of 50", baseline.Round(10*time.Microsecond), "1.00")
	for _, c := range []struct{ name, query string }{
		{"calls, first page of 50", ""},
		{"calls, second page (cursor)", "cursor=" + first.NextCursor},
		{"calls, variant=treatment", "variant=treatment"},
		{"calls, failed only (2%)", "error=true"},
		{"calls, variant + helpfulness >= 5 (2% of calls)", "variant=treatment&score=helpfulness&score_min=5"},
		{"calls, a time range of one hour", "from=" + began.Add(25*time.Hour).Format(time.RFC3339) + "&to=" + began.Add(26*time.Hour).Format(time.RFC3339)},
	} {
		v, _ := url.ParseQuery(c.query)
		q, err := calls.Parse(v)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		var got int
		d, err := median(func() error {
			p, err := calls.Read(ctx, store, org.ID, exp.ID, q)
			got = len(p.Calls)
			return err
		})
		if err != nil {
			return err
		}
		fmt.Printf("%-52s %9s  %.2f  (%d calls)\n", c.name, d.Round(10*time.Microsecond), d.Seconds()/baseline.Seconds(), got)
	}
	return nil
}
