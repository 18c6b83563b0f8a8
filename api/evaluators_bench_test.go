package api_test

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/internal/fakellm"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/secrets"
)

// TestEvaluatorThroughputBench measures an LLM-judge evaluator against
// the fake judge answering in 200 ms at concurrency 32: evaluations per
// second against the bound 32 / 0.2 s = 160/s, and the p95 lag from a
// call's ingest (received_at) to its evaluation. A measurement, not a
// test: set EXPD_BENCH_EVALUATORS=<calls> to run it (docs/quality.md,
// "Benchmark").
func TestEvaluatorThroughputBench(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("EXPD_BENCH_EVALUATORS"))
	if n <= 0 {
		t.Skip("set EXPD_BENCH_EVALUATORS=<calls> to measure evaluator throughput")
	}
	key, _ := secrets.NewKey()
	ring, _ := secrets.Parse(key, "")
	fj := fakellm.New(t, judgeKey)
	fj.SetLatency(200 * time.Millisecond)
	env, _ := testenv.NewWithWorker(t, func(a *activities.Activities) {
		a.Secrets, a.Judge = ring, &evaluators.Judge{AllowPrivate: true}
	}, sdkDeps(t, []func(*api.Deps){func(d *api.Deps) {
		d.Secrets, d.DevToken = ring, "dev-token"
	}})...)
	org := env.NewOrg(t)
	exp := create(t, env, org, validConfig("bench"))
	f := evaluatorFixture{env: env, fj: fj, org: org, exp: exp}

	responses := make([]string, n)
	for i := range responses {
		responses[i] = fmt.Sprintf("answer %d", i)
	}
	for start := 0; start < n; start += 1000 {
		f.postCalls(t, responses[start:min(start+1000, n)]...)
	}
	judge := judgeSpec("bench judge")
	judge["experiments"] = []string{exp.ID}
	judge["sampling_rate"] = 1
	judge["concurrency"] = 32
	// The backlog, then a live phase: liveCalls more sent at 100 a second
	// (under the bound) while the evaluator runs.
	const liveCalls, livePerSecond = 2000, 100
	judge["daily_budget"] = map[string]any{"max_evaluations": n + liveCalls}
	judge["endpoint"].(map[string]any)["base_url"] = fj.BaseURL()
	ev := createEvaluator(t, env, org, judge)

	waitFor := func(want int) {
		deadline := time.Now().Add(time.Duration(want)*50*time.Millisecond + 2*time.Minute)
		for {
			var done int64
			env.DB.Table("evaluations").Where("evaluator_id = ?", ev.ID).Count(&done)
			if done >= int64(want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d evaluations before the deadline", done, want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitFor(n)
	defer func() { // after the backlog's numbers: the live phase's lag
		liveStart := time.Now()
		for i := 0; i < liveCalls; i += livePerSecond {
			tick := time.Now()
			batch := make([]string, livePerSecond)
			for j := range batch {
				batch[j] = fmt.Sprintf("live answer %d", i+j)
			}
			f.postCalls(t, batch...)
			time.Sleep(time.Second - time.Since(tick))
		}
		waitFor(n + liveCalls)
		var pairs []struct{ EvaluatedAt, ReceivedAt time.Time }
		env.DB.Raw(`SELECT v.evaluated_at, e.received_at FROM evaluations v JOIN events e ON e.org_id = v.org_id AND e.event_id = v.call_id
			WHERE v.evaluator_id = ? AND e.received_at >= ?`, ev.ID, liveStart).Scan(&pairs)
		live := make([]float64, len(pairs))
		for i, p := range pairs {
			live[i] = p.EvaluatedAt.Sub(p.ReceivedAt).Seconds()
		}
		if len(live) != liveCalls {
			t.Fatalf("%d live evaluations, want %d", len(live), liveCalls)
		}
		sort.Float64s(live)
		t.Logf("live: %d calls sent at %d/s while the evaluator ran: lag from ingest to evaluation p50 %.1f s, p95 %.1f s, max %.1f s (goal: within 2 minutes)",
			liveCalls, livePerSecond, live[len(live)/2], live[len(live)*95/100], live[len(live)-1])
	}()
	var rows []struct {
		EvaluatedAt time.Time
		ReceivedAt  time.Time
		Status      string
	}
	env.DB.Raw(`SELECT v.evaluated_at, e.received_at, v.status FROM evaluations v JOIN events e ON e.org_id = v.org_id AND e.event_id = v.call_id
		WHERE v.evaluator_id = ? ORDER BY v.evaluated_at LIMIT ?`, ev.ID, n).Scan(&rows)
	if len(rows) != n {
		t.Fatalf("%d evaluations joined to their calls, want %d", len(rows), n)
	}
	failed := 0
	lags := make([]float64, len(rows))
	for i, r := range rows {
		lags[i] = r.EvaluatedAt.Sub(r.ReceivedAt).Seconds()
		if r.Status != evaluators.StatusScored {
			failed++
		}
	}
	sort.Float64s(lags)
	span := rows[len(rows)-1].EvaluatedAt.Sub(rows[0].EvaluatedAt).Seconds()
	rate := float64(n-1) / span
	t.Logf("%d evaluations (%d failed) in %.1f s: %.1f/s = %.2f of the bound 160/s; lag from ingest p50 %.1f s, p95 %.1f s (the calls were all ingested before the evaluator existed, so the lag includes the backlog)",
		n, failed, span, rate, rate/160, lags[len(lags)/2], lags[len(lags)*95/100])
}
