package api_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/internal/fakellm"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/workflows"
)

// evaluatorFixture is expd with a worker on the in-process Temporal
// server, a fake judge, an org and one experiment.
type evaluatorFixture struct {
	env  *testenv.Env
	tenv *temporaltest.Env
	fj   *fakellm.Server
	org  testenv.Org
	exp  experimentBody
}

func newEvaluatorFixture(t *testing.T) evaluatorFixture {
	t.Helper()
	ring := testenv.NewKeyring(t)
	fj := fakellm.New(t, judgeKey)
	env, tenv := testenv.NewWithWorker(t, func(a *activities.Activities) {
		a.Secrets = ring
		a.Judge = &evaluators.Judge{AllowPrivate: true}
		// The poll stays 5 s behind the newest calls (commit order); the
		// test's clock runs ahead so its calls are polled at once.
		a.Now = func() time.Time { return time.Now().Add(10 * time.Second) }
	}, sdkDeps(t, []func(*api.Deps){func(d *api.Deps) {
		d.Secrets = ring
		d.DevToken = "dev-token" // a judge on 127.0.0.1
		d.EvaluatorPoll = 100 * time.Millisecond
	}})...)
	org := env.NewOrg(t)
	return evaluatorFixture{env: env, tenv: tenv, fj: fj, org: org, exp: create(t, env, org, validConfig("support-bot"))}
}

// postCalls stores one model call per response, users alternating arms,
// and returns their ids.
func (f evaluatorFixture) postCalls(t *testing.T, responses ...string) []string {
	t.Helper()
	ids := make([]string, len(responses))
	evs := make([]map[string]any, len(responses))
	for i, r := range responses {
		ev := modelCall(f.exp.ID, fmt.Sprintf("user-%d", i), time.Now())
		ev["response"], ev["prompt"] = r, "question "+r
		if i%2 == 1 {
			ev["variant"] = "concise"
		}
		ids[i], evs[i] = ev["event_id"].(string), ev
	}
	accepted(t, postEvents(t, f.env, f.org.SecretKey, evs...))
	return ids
}

type evalPage struct {
	Evaluations []struct {
		CallID  string   `json:"call_id"`
		Status  string   `json:"status"`
		Score   *float64 `json:"score"`
		Failure string   `json:"failure"`
		Version int      `json:"evaluator_version"`
	} `json:"evaluations"`
	Today struct {
		Evaluations int     `json:"evaluations"`
		CostUSD     float64 `json:"cost_usd"`
	} `json:"today"`
	Next string `json:"next_cursor"`
}

// evaluations reads every page of an evaluator's evaluations.
func (f evaluatorFixture) evaluations(t *testing.T, id string) (all evalPage) {
	t.Helper()
	cursor := ""
	for {
		var p evalPage
		r := f.env.Do(t, "GET", "/v1/evaluators/"+id+"/evaluations?limit=3&cursor="+cursor, nil, testenv.Bearer(f.org.AdminToken)...)
		r.JSON(t, &p)
		if r.Status != http.StatusOK {
			t.Fatalf("evaluations: %d %s", r.Status, r.Body)
		}
		all.Evaluations = append(all.Evaluations, p.Evaluations...)
		all.Today = p.Today
		if p.Next == "" {
			return all
		}
		cursor = p.Next
	}
}

// waitEvaluations waits until the evaluator has n evaluations (a bound
// on the wait, not an assertion on time).
func (f evaluatorFixture) waitEvaluations(t *testing.T, id string, n int) evalPage {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		p := f.evaluations(t, id)
		if len(p.Evaluations) >= n {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d evaluations after 90 s: %+v", len(p.Evaluations), n, p)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type judgeScore struct {
	CallID, Source, Evaluator, EvaluatorVersion, JudgeModel string
	Value                                                   float64
}

func (f evaluatorFixture) scores(t *testing.T, name string) map[string]judgeScore {
	t.Helper()
	var rows []judgeScore
	err := f.env.DB.Raw("SELECT call_id, source, evaluator, evaluator_version, COALESCE(judge_model, '') AS judge_model, value FROM scores WHERE org_id = ? AND name = ?",
		f.org.ID, name).Scan(&rows).Error
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]judgeScore{}
	for _, r := range rows {
		out[r.CallID] = r
	}
	return out
}

// Calls from a client are sampled, graded by the judge and checked by
// code, their scores written through the scores path once each; garbage
// is a failure, never a score; an outage is retried; the budget stops the
// judge exactly at its limit; the judge's key is in no workflow history.
func TestEvaluatorsEndToEnd(t *testing.T) {
	f := newEvaluatorFixture(t)
	admin := testenv.Bearer(f.org.AdminToken)

	code := codeSpec("json")
	code["experiments"] = []string{f.exp.ID}
	codeEv := createEvaluator(t, f.env, f.org, code)

	responses := []string{`{"answer": 1}`, "plain text", `{"ok": true}`, "Reset it in Settings.", "Call support " + fakellm.Trigger(fakellm.Garbage)}
	for i := 0; len(responses) < 40; i++ {
		responses = append(responses, fmt.Sprintf("answer number %d", i))
	}
	ids := f.postCalls(t, responses...)
	byID := map[string]string{}
	var sampled []string
	for i, id := range ids {
		byID[id] = responses[i]
		if evaluators.Sampled(id, 0.5) {
			sampled = append(sampled, id)
		}
	}
	if len(sampled) < 5 || len(sampled) == len(ids) {
		t.Fatalf("%d of %d sampled at 0.5; the sample checks prove nothing", len(sampled), len(ids))
	}
	budget := len(sampled) - 2 // the judge's budget ends before its sample does
	judge := judgeSpec("helpfulness")
	judge["experiments"] = []string{"support-bot"}
	judge["sampling_rate"] = 0.5
	judge["concurrency"] = 3
	judge["daily_budget"] = map[string]any{"max_evaluations": budget}
	judge["endpoint"].(map[string]any)["base_url"] = f.fj.BaseURL()
	f.fj.FailNext(fakellm.ServerError, fakellm.RateLimited, fakellm.ServerError) // an outage first
	judgeEv := createEvaluator(t, f.env, f.org, judge)

	// Code: every call, 1 for JSON answers.
	cp := f.waitEvaluations(t, codeEv.ID, len(ids))
	codeScores := f.scores(t, "valid_json")
	if len(cp.Evaluations) != len(ids) || len(codeScores) != len(ids) {
		t.Fatalf("code: %d evaluations, %d scores, want %d", len(cp.Evaluations), len(codeScores), len(ids))
	}
	for id, s := range codeScores {
		want := 0.0
		if strings.HasPrefix(byID[id], "{") {
			want = 1
		}
		if s.Value != want || s.Source != "code" || s.Evaluator != codeEv.ID || s.EvaluatorVersion != "1" || s.JudgeModel != "" {
			t.Errorf("code score of %q: %+v, want %v", byID[id], s, want)
		}
	}

	// Judge: exactly the budget, of sampled calls only, each graded once.
	jp := f.waitEvaluations(t, judgeEv.ID, budget)
	time.Sleep(500 * time.Millisecond) // a few more polls: none may add an evaluation past the budget
	jp = f.evaluations(t, judgeEv.ID)
	if len(jp.Evaluations) != budget || jp.Today.Evaluations != budget {
		t.Fatalf("judge: %d evaluations (today %d), want exactly the budget %d", len(jp.Evaluations), jp.Today.Evaluations, budget)
	}
	judged := f.scores(t, "helpfulness")
	failed := 0
	for _, e := range jp.Evaluations {
		resp := byID[e.CallID]
		if !evaluators.Sampled(e.CallID, 0.5) {
			t.Errorf("call %s evaluated but not sampled", e.CallID)
		}
		if strings.Contains(resp, fakellm.Trigger(fakellm.Garbage)) {
			failed++
			if e.Status != "failed" || e.Failure != evaluators.FailUnparseable || e.Score != nil {
				t.Errorf("garbage verdict: %+v", e)
			}
			if _, scored := judged[e.CallID]; scored {
				t.Errorf("a garbage verdict became a score")
			}
			continue
		}
		s, ok := judged[e.CallID]
		if e.Status != "scored" || !ok || s.Value != fakellm.ScoreOf(resp) || s.Source != "judge" || s.Evaluator != judgeEv.ID ||
			s.EvaluatorVersion != "1" || s.JudgeModel != "gpt-4o-mini" || f.fj.Graded(resp) != 1 {
			t.Errorf("judged %q: evaluation %+v score %+v graded %d times", resp, e, s, f.fj.Graded(resp))
		}
	}
	if len(judged)+failed != budget {
		t.Fatalf("%d judge scores + %d failures, want %d", len(judged), failed, budget)
	}

	// The judge's key is in no workflow history (nor any answer above).
	for _, id := range []string{judgeEv.ID, codeEv.ID} {
		h := workflowHistory(t, f.tenv, workflows.EvaluatorID(id))
		if !bytes.Contains(h, []byte(id)) {
			t.Fatal("the history does not carry the evaluator id; the scan proves nothing")
		}
		if bytes.Contains(h, []byte(judgeKey)) {
			t.Fatalf("the judge's key is in the history of %s", id)
		}
	}

	// Deleting the evaluator ends its workflow.
	if r := f.env.Do(t, "DELETE", "/v1/evaluators/"+judgeEv.ID, nil, admin...); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d", r.Status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := f.tenv.Client.GetWorkflow(ctx, workflows.EvaluatorID(judgeEv.ID), "").Get(ctx, nil); err != nil {
		t.Fatalf("the deleted evaluator's workflow: %v", err)
	}
}

// A backfill evaluates calls the evaluator never saw (stored before it
// existed), once each.
func TestEvaluatorBackfillEndToEnd(t *testing.T) {
	f := newEvaluatorFixture(t)
	before := time.Now().Add(-time.Minute)
	ids := f.postCalls(t, `{"a":1}`, "no", `[1]`)
	code := codeSpec("json")
	code["experiments"] = []string{f.exp.ID}
	ev := createEvaluator(t, f.env, f.org, code)
	// Live polling evaluates them too (they are new to it); the backfill
	// of the same range must not evaluate any twice.
	f.waitEvaluations(t, ev.ID, len(ids))
	r := f.env.Do(t, "POST", "/v1/evaluators/"+ev.ID+"/backfill",
		map[string]any{"from": before.Format(time.RFC3339), "to": time.Now().Add(time.Minute).Format(time.RFC3339)}, testenv.Bearer(f.org.AdminToken)...)
	if r.Status != http.StatusAccepted {
		t.Fatalf("backfill: %d %s", r.Status, r.Body)
	}
	time.Sleep(500 * time.Millisecond)
	if p := f.evaluations(t, ev.ID); len(p.Evaluations) != len(ids) {
		t.Fatalf("%d evaluations after the backfill, want %d", len(p.Evaluations), len(ids))
	}
	p := testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/evaluators/"+ev.ID+"/backfill",
		map[string]any{"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, testenv.Bearer(f.org.AdminToken)...), http.StatusBadRequest)
	if !p.HasFieldError("to") {
		t.Fatalf("reversed backfill: %+v", p)
	}
	testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/evaluators/"+uuid.NewString()+"/backfill",
		map[string]any{"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"}, testenv.Bearer(f.org.AdminToken)...), http.StatusNotFound)
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/evaluators/"+ev.ID+"/evaluations?status=maybe", nil, testenv.Bearer(f.org.AdminToken)...), http.StatusBadRequest)
}

// A manual run's judge-score metric equals a computation from the fake
// judge's grades: per user the mean grade of their calls, per arm the
// mean over users.
func TestJudgeScoresInAManualRun(t *testing.T) {
	f := newEvaluatorFixture(t)
	cfg := validConfig("judged")
	cfg["metrics"] = []map[string]any{{"name": "helpfulness", "kind": "mean", "category": "primary", "method_default": "welch_t",
		"metric_version": 1, "shared_org_wide": false,
		"source": map[string]any{"event_type": "score", "score": "helpfulness", "score_source": "judge"}}}
	exp := create(t, f.env, f.org, cfg)
	now := time.Now().UTC()
	perUser := map[string][]float64{}
	arm := map[string]string{}
	var events []map[string]any
	calls := 0
	for i := range 24 {
		user, variant := fmt.Sprintf("judged-%d", i), []string{"control", "concise"}[i%2]
		arm[user] = variant
		events = append(events, map[string]any{"event_id": uuid.NewString(), "type": "exposure", "experiment_id": exp.ID,
			"user_id": user, "variant": variant, "timestamp": stamp(now), "config_version": 1})
		for k := range 1 + i%3 {
			answer := fmt.Sprintf("%s answer %d by %s", variant, k, user)
			ev := modelCall(exp.ID, user, now.Add(time.Duration(k+1)*time.Millisecond))
			ev["variant"], ev["response"] = variant, answer
			events = append(events, ev)
			perUser[user] = append(perUser[user], fakellm.ScoreOf(answer))
			calls++
		}
	}
	accepted(t, postEvents(t, f.env, f.org.SecretKey, events...))
	judge := judgeSpec("run judge")
	judge["experiments"] = []string{exp.ID}
	judge["sampling_rate"] = 1
	judge["endpoint"].(map[string]any)["base_url"] = f.fj.BaseURL()
	ev := createEvaluator(t, f.env, f.org, judge)
	f.waitEvaluations(t, ev.ID, calls)
	// The worker's clock runs 10 s ahead (newEvaluatorFixture): the run's
	// instant must fall after the scores' timestamps.
	time.Sleep(11 * time.Second)

	auth := testenv.Bearer(f.org.AdminToken)
	runID := startRun(t, f.env, auth, exp.ID)
	waitForResultsRun(t, f.env, auth, exp.ID, runID, 1)
	var body struct {
		Metrics []scoreRow `json:"metrics"`
	}
	f.env.Do(t, "GET", "/v1/experiments/"+exp.ID+"/results", nil, auth...).JSON(t, &body)
	if len(body.Metrics) != 1 {
		t.Fatalf("results: %+v", body)
	}
	row := body.Metrics[0]
	for _, variant := range []string{"control", "concise"} {
		var sum float64
		n := 0
		for user, grades := range perUser {
			if arm[user] != variant {
				continue
			}
			var s float64
			for _, g := range grades {
				s += g
			}
			sum, n = sum+s/float64(len(grades)), n+1
		}
		got := row.Distribution.Arms[variant]
		if got.N != n || math.Abs(got.Mean-sum/float64(n)) > 1e-9 {
			t.Errorf("%s: n %d mean %v, want n %d mean %v from the judge's grades", variant, got.N, got.Mean, n, sum/float64(n))
		}
	}
}
