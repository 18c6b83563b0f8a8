package api_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/guardrails"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// scoreRow is what the score-metrics test reads of a results row.
type scoreRow struct {
	Metric       string           `json:"metric"`
	Test         string           `json:"test"`
	Effect       float64          `json:"effect"`
	NPerArm      map[string]int64 `json:"n_per_arm"`
	Sequential   bool             `json:"sequential"`
	CUPED        bool             `json:"cuped"`
	Undefined    string           `json:"undefined"`
	Distribution struct {
		Arms map[string]struct {
			N    int     `json:"n"`
			Mean float64 `json:"mean"`
		} `json:"arms"`
	} `json:"distribution"`
	OtherMode *struct {
		PValue float64 `json:"p_value"`
	} `json:"other_mode"`
	UnscoredUsers  map[string]int64   `json:"unscored_users"`
	ScoreCoverage  map[string]float64 `json:"score_coverage"`
	OrphanScores   *int64             `json:"orphan_scores"`
	NonInferiority *struct {
		Decision string `json:"decision"`
	} `json:"non_inferiority"`
}

// TestScoreMetricsEndToEnd: model calls through POST /v1/events and their
// scores through POST /v1/scores (judge grades with the secret key, human
// thumbs and ratings with the publishable one; some scores before their
// call, a replaced grade, an orphan), a manual run and GET results. Each
// score metric's per-arm mean and n equal a computation here from the
// stored scores; unscored_users, score_coverage and orphan_scores are
// right; the judge metric gets CUPED from pre-period scores, a
// sequential headline and the decision it exists for ("the cheaper model
// is no worse than -2 % on helpfulness"); and a guardrail on
// thumbs_up_rate sees its breach.
func TestScoreMetricsEndToEnd(t *testing.T) {
	env, _ := testenv.NewWithWorker(t, nil)
	org := env.NewOrg(t)
	auth := testenv.Bearer(org.MemberToken)
	shared := false
	judge := &experiments.MetricSource{EventType: vocab.TypeScore, Score: "helpfulness", ScoreSource: "judge"}
	anySource := &experiments.MetricSource{EventType: vocab.TypeScore, Score: "helpfulness"}
	cfg := experiments.Config{
		Name: "e2e-scores", Salt: "scores-salt", BucketCount: 1000,
		Allocation: []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}},
		Metrics: []experiments.Metric{
			{Name: "helpfulness", Kind: vocab.Mean, Category: "primary", MethodDefault: "welch_t", MetricVersion: 1, SharedOrgWide: &shared, Source: judge,
				NonInferiorityMargin: &experiments.Margin{Value: 0.02, Type: "relative", BadDirection: "decrease"}},
			{Name: "helpfulness_any", Kind: vocab.Mean, Category: "secondary", MethodDefault: "welch_t", MetricVersion: 1, SharedOrgWide: &shared, Source: anySource},
			{Name: "thumbs_up_rate", Kind: vocab.Proportion, Category: "guardrail", MethodDefault: "welch_t", MetricVersion: 1, SharedOrgWide: &shared,
				Guardrail: &experiments.Guardrail{BadDirection: "decrease", MaxChange: 0, Action: "alert"}},
		},
	}
	exp, history := createWithHistory(t, env, auth, cfg)

	type user struct {
		id, variant string
		pre         string   // the pre-period call's id
		calls       []string // in-experiment call ids
	}
	r := rand.New(rand.NewPCG(27, 2))
	now := time.Now().UTC()
	var users []user
	var events, early, judged, human []map[string]any
	sc := func(call, name, source string, v float64, at time.Time) map[string]any {
		return map[string]any{"call_id": call, "name": name, "source": source, "value": v, "timestamp": at.Format(time.RFC3339Nano)}
	}
	const perArm = 150
	for i := range 2 * perArm {
		u := user{id: fmt.Sprintf("s-%d", i), variant: []string{"control", "treatment"}[i%2]}
		level := 3.5 + 0.5*r.NormFloat64()
		thumbs := 0.7
		if u.variant == "treatment" {
			level += 0.03 // the cheaper model: no worse
			thumbs = 0.3  // but its users like it less
		}
		ev := func(typ, expID string, at time.Time) map[string]any {
			return map[string]any{"event_id": fmt.Sprintf("%s-%d", u.id, len(events)), "type": typ, "experiment_id": expID,
				"user_id": u.id, "variant": u.variant, "timestamp": at.Format(time.RFC3339Nano)}
		}
		pre := ev(string(vocab.TypeModelCall), history.ID, now.Add(-20*time.Hour))
		pre["latency_ms"] = 100
		u.pre = pre["event_id"].(string)
		events = append(events, pre)
		judged = append(judged, sc(u.pre, "helpfulness", "judge", level+0.05*r.NormFloat64(), now.Add(-20*time.Hour+time.Second)))
		events = append(events, ev(string(vocab.TypeExposure), exp.ID, now))
		for k := range 1 + r.IntN(4) {
			call := ev(string(vocab.TypeModelCall), exp.ID, now.Add(time.Duration(k+1)*time.Millisecond))
			call["latency_ms"] = 100
			id := call["event_id"].(string)
			u.calls = append(u.calls, id)
			events = append(events, call)
			at := now.Add(time.Second)
			if r.Float64() < 0.8 {
				judged = append(judged, sc(id, "helpfulness", "judge", level+0.1*r.NormFloat64(), at))
			}
			if r.Float64() < 0.3 {
				human = append(human, sc(id, "helpfulness", "human", math.Round(level), at))
			}
			if r.Float64() < 0.5 {
				v := 0.0
				if r.Float64() < thumbs {
					v = 1
				}
				s := sc(id, "thumbs_up", "human", v, at)
				if i < 20 {
					early = append(early, s) // sent before its call
				} else {
					human = append(human, s)
				}
			}
		}
		users = append(users, u)
	}
	// A grade replaced by a later one of the same call, and an orphan.
	replaced := users[3].calls[0]
	judged = append(judged, sc(replaced, "helpfulness", "judge", 1, now.Add(500*time.Millisecond)))
	human = append(human, sc("never-arrives", "thumbs_up", "human", 1, now.Add(time.Second)))

	send := func(path, key, field string, items []map[string]any) {
		t.Helper()
		for start := 0; start < len(items); start += 500 {
			batch := items[start:min(start+500, len(items))]
			resp := env.Do(t, http.MethodPost, path, map[string]any{field: batch}, testenv.APIKey(key)...)
			var ack struct{ Accepted, Duplicates int }
			resp.JSON(t, &ack)
			if resp.Status != http.StatusAccepted || ack.Accepted+ack.Duplicates != len(batch) {
				t.Fatalf("%s: %d %s", path, resp.Status, resp.Body)
			}
		}
	}
	send("/v1/scores", org.PublishableKey, "scores", early)
	send("/v1/events", org.PublishableKey, "events", events)
	send("/v1/scores", org.SecretKey, "scores", judged)
	send("/v1/scores", org.PublishableKey, "scores", human)
	// The replacement: a later grade of the same call.
	final := 3.9
	send("/v1/scores", org.SecretKey, "scores", []map[string]any{sc(replaced, "helpfulness", "judge", final, now.Add(2*time.Second))})
	time.Sleep(2100 * time.Millisecond) // the run's instant falls after every event

	runID := startRun(t, env, auth, exp.ID)
	waitForResultsRun(t, env, auth, exp.ID, runID, len(cfg.Metrics))
	var body struct {
		OrphanScores *int64     `json:"orphan_scores"`
		Metrics      []scoreRow `json:"metrics"`
	}
	resp := env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/results", nil, auth...)
	if resp.Status != http.StatusOK {
		t.Fatalf("results: %d %s", resp.Status, resp.Body)
	}
	resp.JSON(t, &body)
	if body.OrphanScores == nil || *body.OrphanScores != 1 {
		t.Errorf("run orphan_scores = %v, want 1 (the thumbs-up of a call that never arrived)", body.OrphanScores)
	}

	// The same numbers from the stored scores.
	stored := storedScores(t, env, org.ID)
	if s := stored[replaced+"/helpfulness/judge"]; s.Value != final {
		t.Fatalf("replaced grade stored as %v, want the later %v", s.Value, final)
	}
	// callValue is a call's value of a metric: its score of one source, or
	// the mean over sources; ok false when unscored.
	callValue := func(call, name, source string, indicator bool) (float64, bool) {
		var sum float64
		n := 0
		for _, src := range []string{"human", "judge", "code"} {
			s, ok := stored[call+"/"+name+"/"+src]
			if !ok || (source != "" && src != source) {
				continue
			}
			v := s.Value
			if indicator && v != 0 {
				v = 1
			}
			sum, n = sum+v, n+1
		}
		return sum / float64(max(n, 1)), n > 0
	}
	type want struct {
		values, pre   map[string][]float64
		unscored      map[string]int64
		calls, scored map[string]int
	}
	expect := func(name, source string, indicator bool) want {
		w := want{values: map[string][]float64{}, pre: map[string][]float64{}, unscored: map[string]int64{}, calls: map[string]int{}, scored: map[string]int{}}
		for _, u := range users {
			var sum float64
			n := 0
			for _, c := range u.calls {
				if v, ok := callValue(c, name, source, indicator); ok {
					sum, n = sum+v, n+1
				}
			}
			w.calls[u.variant] += len(u.calls)
			w.scored[u.variant] += n
			if n == 0 {
				w.unscored[u.variant]++
				continue
			}
			x, _ := callValue(u.pre, name, source, indicator) // 0 without a pre-period score
			w.values[u.variant] = append(w.values[u.variant], sum/float64(n))
			w.pre[u.variant] = append(w.pre[u.variant], x)
		}
		return w
	}
	wants := map[string]want{
		"helpfulness":     expect("helpfulness", "judge", false),
		"helpfulness_any": expect("helpfulness", "", false),
		"thumbs_up_rate":  expect("thumbs_up", "human", true),
	}
	if len(body.Metrics) != len(wants) {
		t.Fatalf("%d rows, want %d", len(body.Metrics), len(wants))
	}
	for _, row := range body.Metrics {
		w := wants[row.Metric]
		if row.Undefined != "" {
			t.Fatalf("%s undefined: %s", row.Metric, row.Undefined)
		}
		for _, arm := range []string{"control", "treatment"} {
			vals := w.values[arm]
			mean := 0.0
			for _, v := range vals {
				mean += v / float64(len(vals))
			}
			got := row.Distribution.Arms[arm]
			if got.N != len(vals) || row.NPerArm[arm] != int64(len(vals)) || math.Abs(got.Mean-mean) > 1e-9 {
				t.Errorf("%s/%s: n %d (n_per_arm %d), mean %v; want n %d, mean %v from the stored scores", row.Metric, arm, got.N, row.NPerArm[arm], got.Mean, len(vals), mean)
			}
			if row.UnscoredUsers[arm] != w.unscored[arm] || w.unscored[arm] == 0 && row.Metric != "helpfulness_any" {
				t.Errorf("%s/%s: unscored_users %d, want %d (and some)", row.Metric, arm, row.UnscoredUsers[arm], w.unscored[arm])
			}
			if c := float64(w.scored[arm]) / float64(w.calls[arm]); math.Abs(row.ScoreCoverage[arm]-c) > 1e-12 || c >= 1 {
				t.Errorf("%s/%s: score_coverage %v, want %v (below 1)", row.Metric, arm, row.ScoreCoverage[arm], c)
			}
		}
		wantOrphans := int64(0)
		if row.Metric == "thumbs_up_rate" {
			wantOrphans = 1
		}
		if row.OrphanScores == nil || *row.OrphanScores != wantOrphans {
			t.Errorf("%s: orphan_scores %v, want %d", row.Metric, row.OrphanScores, wantOrphans)
		}
		// CUPED from the pre-period grades (no thumbs before exposure: none
		// for thumbs_up_rate), and the welch_t numbers of stats/.
		cmp, err := stats.CompareCUPED(stats.WelchT, w.values["control"], w.pre["control"], w.values["treatment"], w.pre["treatment"], stats.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if row.CUPED != (row.Metric != "thumbs_up_rate") || !row.Sequential || row.OtherMode == nil || math.Abs(row.Effect-cmp.Effect) > 1e-9 || math.Abs(row.OtherMode.PValue-cmp.PValue) > 1e-9 {
			t.Errorf("%s: cuped %v sequential %v effect %v; want CUPED where pre-period scores exist, sequential and effect %v p %v", row.Metric, row.CUPED, row.Sequential, row.Effect, cmp.Effect, cmp.PValue)
		}
	}
	for _, row := range body.Metrics {
		if row.Metric == "helpfulness" && (row.NonInferiority == nil || row.NonInferiority.Decision != stats.NonInferior) {
			t.Errorf("helpfulness: non_inferiority %+v, want %s (treatment no worse than -2 %%)", row.NonInferiority, stats.NonInferior)
		}
	}

	// The guardrail on thumbs_up_rate reads the stored score row.
	rows, err := results.LoadRows(t.Context(), env.DB, org.ID, exp.ID, runID)
	if err != nil {
		t.Fatal(err)
	}
	breaches := guardrails.Evaluate(exp.ID, cfg, rows)
	if len(breaches) != 1 || breaches[0].Metric != "thumbs_up_rate" {
		t.Errorf("guardrail breaches %+v, want thumbs_up_rate's", breaches)
	}
}

// TestScoreMetricSourcesRefusedClearly: a bad score source is a 400
// problem naming the field, in an experiment and in a shared definition,
// and nothing is created; an event of type score is still refused by
// POST /v1/events, whose contract is unchanged.
func TestScoreMetricSourcesRefusedClearly(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	auth := testenv.Bearer(org.MemberToken)
	shared := false
	q := 0.5
	metric := func(kind vocab.Kind, method string, src experiments.MetricSource) experiments.Metric {
		return experiments.Metric{Name: "quality", Kind: kind, Category: "primary", MethodDefault: method, MetricVersion: 1, SharedOrgWide: &shared, Source: &src}
	}
	helpful := experiments.MetricSource{EventType: vocab.TypeScore, Score: "helpfulness"}
	robot, unnamed, badName := helpful, helpful, helpful
	robot.ScoreSource = "robot"
	unnamed.Score = ""
	badName.Score = "no spaces"
	onCall := experiments.MetricSource{EventType: vocab.TypeModelCall, Field: "latency_ms", Score: "helpfulness"}
	ratio := metric(vocab.Ratio, "", experiments.MetricSource{EventType: vocab.TypeModelCall, Field: "cost_usd"})
	ratio.Denominator = &helpful
	quantile := metric(vocab.Quantile, "", helpful)
	quantile.Quantile = &q
	cases := []struct {
		name  string
		m     experiments.Metric
		field string
	}{
		{"unknown score_source", metric(vocab.Mean, "welch_t", robot), "source.score_source"},
		{"no score name", metric(vocab.Mean, "welch_t", unnamed), "source.score"},
		{"a score name with a space", metric(vocab.Mean, "welch_t", badName), "source.score"},
		{"a sum of scores", metric(vocab.Sum, "welch_t", helpful), "kind"},
		{"a quantile of scores", quantile, "kind"},
		{"z_test on a score proportion", metric(vocab.Proportion, "z_test", helpful), "method_default"},
		{"score on a model_call source", metric(vocab.Mean, "welch_t", onCall), "source.score"},
		{"a score denominator", ratio, "denominator.event_type"},
	}
	for _, c := range cases {
		cfg := resultstest0("bad-score-metric")
		cfg.Metrics = []experiments.Metric{c.m}
		p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/experiments", cfg, auth...), http.StatusBadRequest)
		if !p.HasFieldError("metrics[0]." + c.field) {
			t.Errorf("experiment, %s: problem %+v does not name metrics[0].%s", c.name, p, c.field)
		}
		p = testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/metrics", c.m, auth...), http.StatusBadRequest)
		if !p.HasFieldError(c.field) {
			t.Errorf("shared metric, %s: problem %+v does not name %s", c.name, p, c.field)
		}
	}
	var list struct{ Experiments []any }
	env.Do(t, http.MethodGet, "/v1/experiments", nil, auth...).JSON(t, &list)
	if len(list.Experiments) != 0 {
		t.Errorf("%d experiments after the bad posts, want none", len(list.Experiments))
	}
	// A valid score metric is taken by both.
	good := metric(vocab.Proportion, "welch_t", experiments.MetricSource{EventType: vocab.TypeScore, Score: "thumbs_up", ScoreSource: "human"})
	cfg := resultstest0("good-score-metric")
	cfg.Metrics = []experiments.Metric{good}
	if resp := env.Do(t, http.MethodPost, "/v1/experiments", cfg, auth...); resp.Status != http.StatusCreated {
		t.Errorf("valid score metric: %d %s", resp.Status, resp.Body)
	}
	if resp := env.Do(t, http.MethodPost, "/v1/metrics", good, auth...); resp.Status != http.StatusCreated {
		t.Errorf("valid shared score metric: %d %s", resp.Status, resp.Body)
	}
	// POST /v1/events knows no event of type score.
	ev := map[string]any{"event_id": "s-1", "type": string(vocab.TypeScore), "experiment_id": "x", "user_id": "u", "variant": "control",
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano)}
	resp := env.Do(t, http.MethodPost, "/v1/events", map[string]any{"events": []any{ev}}, testenv.APIKey(org.PublishableKey)...)
	var ack struct {
		Accepted int
		Rejected []struct{ Field string }
	}
	resp.JSON(t, &ack)
	if ack.Accepted != 0 || len(ack.Rejected) != 1 {
		t.Errorf("an event of type score: %d %s, want it rejected", resp.Status, resp.Body)
	}
}
