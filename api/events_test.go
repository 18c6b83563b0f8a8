package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/api"
	"github.com/expd/expd/assignments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/ratelimit"
)

type ackBody struct {
	Accepted      int   `json:"accepted"`
	Duplicates    int   `json:"duplicates"`
	ConfigVersion int64 `json:"config_version"`
	Rejected      []struct {
		Index   int    `json:"index"`
		EventID string `json:"event_id"`
		Reason  string `json:"reason"`
	} `json:"rejected"`
}

// ingestFixture is an org with one experiment ("exp", control/concise).
type ingestFixture struct {
	env *testenv.Env
	org testenv.Org
	exp experimentBody
}

func newIngestFixture(t *testing.T, tune ...func(*api.Deps)) ingestFixture {
	t.Helper()
	env := newSDKEnv(t, tune...)
	org := env.NewOrg(t)
	return ingestFixture{env: env, org: org, exp: create(t, env, org, validConfig("exp"))}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func exposure(expRef, user, variant string, at time.Time) map[string]any {
	return map[string]any{"event_id": uuid.NewString(), "type": "exposure", "experiment_id": expRef,
		"user_id": user, "variant": variant, "timestamp": stamp(at), "config_version": 1}
}

func modelCall(expRef, user string, at time.Time) map[string]any {
	return map[string]any{"event_id": uuid.NewString(), "type": "model_call", "experiment_id": expRef,
		"user_id": user, "variant": "control", "timestamp": stamp(at), "model": "gpt-x", "latency_ms": 812.5,
		"input_tokens": 120, "output_tokens": 30, "cost_usd": 0.0021, "time_to_first_token_ms": 95.0,
		"error": nil, "prompt": "Hi", "response": "Hello"}
}

func businessEvent(expRef, user string, at time.Time) map[string]any {
	return map[string]any{"event_id": uuid.NewString(), "type": "business_event", "experiment_id": expRef,
		"user_id": user, "variant": "concise", "timestamp": stamp(at), "business_metric": "revenue", "value": 9.5}
}

func postEvents(t *testing.T, env *testenv.Env, key string, events ...map[string]any) testenv.Response {
	t.Helper()
	return env.Do(t, "POST", "/v1/events", map[string]any{"events": events}, testenv.APIKey(key)...)
}

func accepted(t *testing.T, r testenv.Response) ackBody {
	t.Helper()
	if r.Status != http.StatusAccepted {
		t.Fatalf("status %d, want 202: %s", r.Status, r.Body)
	}
	var a ackBody
	r.JSON(t, &a)
	return a
}

func countRows(t *testing.T, env *testenv.Env, where string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := env.DB.Table("events").Where(where, args...).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEventsStoresEachTypeWithCanonicalExperimentID(t *testing.T) {
	f := newIngestFixture(t)
	now := time.Now()
	exp, call, biz := exposure("exp", "u1", "control", now), modelCall(f.exp.ID, "u1", now), businessEvent("exp", "u1", now)
	delete(biz, "value") // a business event without value counts one occurrence
	a := accepted(t, postEvents(t, f.env, f.org.PublishableKey, exp, call, biz))
	if a.Accepted != 3 || a.Duplicates != 0 || len(a.Rejected) != 0 || a.ConfigVersion != f.exp.ConfigVersion {
		t.Fatalf("ack %+v, want 3 accepted at config_version %d", a, f.exp.ConfigVersion)
	}
	var rows []ingest.EventRow
	if err := f.env.DB.Where("org_id = ?", f.org.ID).Order("type").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows stored, want 3", len(rows))
	}
	b, m, e := rows[0], rows[2], rows[1]
	for _, r := range rows {
		if r.ExperimentID != f.exp.ID || r.UserID != "u1" || r.Source != ingest.SourceAPI || r.ReceivedAt.IsZero() {
			t.Fatalf("row %+v: want canonical experiment id %s", r, f.exp.ID)
		}
	}
	if e.EventID != exp["event_id"] || e.Variant != "control" || e.ConfigVersion == nil || *e.ConfigVersion != 1 || !e.Ts.Equal(now.Truncate(time.Microsecond)) && !e.Ts.Equal(now) {
		t.Fatalf("exposure row %+v", e)
	}
	if m.LatencyMs == nil || *m.LatencyMs != 812.5 || *m.InputTokens != 120 || m.TotalTokens == nil || *m.TotalTokens != 150 ||
		*m.Model != "gpt-x" || *m.Prompt != "Hi" || *m.Response != "Hello" || m.Error != nil || *m.CostUSD != 0.0021 {
		t.Fatalf("model_call row %+v", m)
	}
	if b.BusinessMetric == nil || *b.BusinessMetric != "revenue" || b.Value == nil || *b.Value != 1 || b.LatencyMs != nil {
		t.Fatalf("business_event row %+v", b)
	}
	var pin assignments.Assignment
	if err := f.env.DB.Where("experiment_id = ? AND user_id = ?", f.exp.ID, "u1").Take(&pin).Error; err != nil || pin.Variant != "control" || pin.Source != "exposure" {
		t.Fatalf("exposure did not pin: %+v %v", pin, err)
	}
}

func TestEventsRejectsBadEventsAndKeepsTheRest(t *testing.T) {
	f := newIngestFixture(t)
	now := time.Now()
	edit := func(base map[string]any, kv ...any) map[string]any {
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(base, kv[i].(string))
			} else {
				base[kv[i].(string)] = kv[i+1]
			}
		}
		return base
	}
	cases := []struct {
		event map[string]any
		field string
	}{
		{edit(exposure("exp", "u", "control", now), "event_id", nil), "event_id"},
		{edit(exposure("exp", "u", "control", now), "event_id", "has space"), "event_id"},
		{edit(exposure("exp", "u", "control", now), "event_id", strings.Repeat("x", 129)), "event_id"},
		{edit(exposure("exp", "u", "control", now), "type", "click"), "type"},
		{edit(exposure("exp", "u", "control", now), "type", nil), "type"},
		{edit(exposure("exp", "u", "control", now), "experiment_id", nil), "experiment_id"},
		{edit(exposure("exp", "u", "control", now), "experiment_id", "no-such-experiment"), "experiment_id"},
		{edit(exposure("exp", "u", "control", now), "experiment_id", uuid.NewString()), "experiment_id"},
		{edit(exposure("exp", "u", "control", now), "user_id", nil), "user_id"},
		{edit(exposure("exp", "u", "control", now), "user_id", "a\u0000b"), "user_id"},
		{edit(exposure("exp", "u", "control", now), "user_id", strings.Repeat("u", 257)), "user_id"},
		{edit(exposure("exp", "u", "control", now), "timestamp", nil), "timestamp"},
		{edit(exposure("exp", "u", "control", now), "timestamp", "yesterday"), "timestamp"},
		{edit(exposure("exp", "u", "control", now), "timestamp", 1700000000), "timestamp"},
		{edit(exposure("exp", "u", "control", now), "timestamp", stamp(now.Add(-25*time.Hour))), "timestamp"},
		{edit(exposure("exp", "u", "control", now), "timestamp", stamp(now.Add(6*time.Minute))), "timestamp"},
		{edit(exposure("exp", "u", "control", now), "variant", nil), "variant"},
		{edit(exposure("exp", "u", "control", now), "variant", "bad variant!"), "variant"},
		{edit(exposure("exp", "u", "control", now), "config_version", -1), "config_version"},
		{edit(exposure("exp", "u", "control", now), "latency_ms", 5), "latency_ms"},
		{edit(exposure("exp", "u", "control", now), "value", 5), "value"},
		{edit(modelCall("exp", "u", now), "latency_ms", nil), "latency_ms"},
		{edit(modelCall("exp", "u", now), "latency_ms", -1), "latency_ms"},
		{edit(modelCall("exp", "u", now), "latency_ms", "fast"), "latency_ms"},
		{edit(modelCall("exp", "u", now), "input_tokens", -3), "input_tokens"},
		{edit(modelCall("exp", "u", now), "output_tokens", 1.5), "output_tokens"},
		{edit(modelCall("exp", "u", now), "cost_usd", -0.1), "cost_usd"},
		{edit(modelCall("exp", "u", now), "time_to_first_token_ms", -2), "time_to_first_token_ms"},
		{edit(modelCall("exp", "u", now), "prompt", strings.Repeat("p", 64<<10+1)), "prompt"},
		{edit(modelCall("exp", "u", now), "model", strings.Repeat("m", 257)), "model"},
		{edit(modelCall("exp", "u", now), "business_metric", "revenue"), "business_metric"},
		{edit(businessEvent("exp", "u", now), "business_metric", nil), "business_metric"},
		{edit(businessEvent("exp", "u", now), "business_metric", "bad metric"), "business_metric"},
		{edit(businessEvent("exp", "u", now), "value", "lots"), "value"},
		{edit(businessEvent("exp", "u", now), "model", "gpt"), "model"},
	}
	good := exposure("exp", "good-user", "concise", now)
	batch := []map[string]any{good}
	for _, c := range cases {
		batch = append(batch, c.event)
	}
	a := accepted(t, postEvents(t, f.env, f.org.SecretKey, batch...))
	if a.Accepted != 1 || len(a.Rejected) != len(cases) {
		t.Fatalf("accepted %d, rejected %d; want 1 and %d: %+v", a.Accepted, len(a.Rejected), len(cases), a.Rejected)
	}
	for i, r := range a.Rejected {
		c := cases[i]
		if r.Index != i+1 || !strings.HasPrefix(r.Reason, c.field+":") && !strings.Contains(r.Reason, "; "+c.field+":") {
			t.Errorf("case %d: rejection %+v, want index %d naming %q", i, r, i+1, c.field)
		}
		if id, _ := c.event["event_id"].(string); id != "" && r.EventID != id {
			t.Errorf("case %d: rejection names event %q, want %q", i, r.EventID, id)
		}
	}
	if n := countRows(t, f.env, "org_id = ?", f.org.ID); n != 1 {
		t.Fatalf("%d rows stored, want only the good one", n)
	}
	// A batch where an element is not an object rejects that element.
	a = accepted(t, f.env.Do(t, "POST", "/v1/events", `{"events": [null, 3, "x", `+string(testenv.Marshal(t, exposure("exp", "v", "control", now)))+`]}`, testenv.APIKey(f.org.PublishableKey)...))
	if a.Accepted != 1 || len(a.Rejected) != 3 || a.Rejected[2].Index != 2 {
		t.Fatalf("non-object events: %+v", a)
	}
}

func TestEventsEnvelopeLimitsAndAuth(t *testing.T) {
	f := newIngestFixture(t)
	key := testenv.APIKey(f.org.PublishableKey)
	for body, code := range map[string]string{
		`{"events": [`:                  "malformed_json",
		`[{"event_id": "a"}]`:           "malformed_json",
		`{"events": {}}`:                "validation_failed",
		`{"batch": []}`:                 "validation_failed",
		`{"events": null}`:              "validation_failed",
		`{"events": []}`:                "validation_failed",
		`{"events": []} {"events": []}`: "malformed_json",
	} {
		p := testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/events", body, key...), 400)
		if p.Code != code {
			t.Errorf("body %q: code %q, want %q", body, p.Code, code)
		}
	}
	many := make([]map[string]any, 1001)
	for i := range many {
		many[i] = map[string]any{"event_id": fmt.Sprint(i)}
	}
	p := testenv.ExpectProblem(t, postEvents(t, f.env, f.org.PublishableKey, many...), 400)
	if !p.HasFieldError("events") {
		t.Fatalf("1001 events: %+v", p)
	}
	big := exposure("exp", "u", "control", time.Now())
	big["padding"] = strings.Repeat("x", 1<<20)
	if p := testenv.ExpectProblem(t, postEvents(t, f.env, f.org.PublishableKey, big), 413); p.Code != "body_too_large" {
		t.Fatalf("oversized body: %+v", p)
	}
	other := newIngestFixture(t)
	for name, hdr := range map[string][]string{
		"missing":     nil,
		"garbage":     testenv.APIKey("pk_nope"),
		"session jwt": testenv.Bearer(f.org.AdminToken),
		"unknown key": testenv.APIKey("sk_" + strings.Repeat("A", 43)),
		"another env": testenv.APIKey(other.org.PublishableKey),
	} {
		r := f.env.Do(t, "POST", "/v1/events", map[string]any{"events": []any{exposure("exp", "u", "control", time.Now())}}, hdr...)
		if p := testenv.ExpectProblem(t, r, 401); p.Code != "unauthorized" {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if n := countRows(t, f.env, "1 = 1"); n != 0 {
		t.Fatalf("%d rows stored by refused requests", n)
	}
}

func TestEventsRejectAnotherOrgsExperiment(t *testing.T) {
	f := newIngestFixture(t)
	other := f.env.NewOrg(t)
	theirs := create(t, f.env, other, validConfig("theirs"))
	now := time.Now()
	a := accepted(t, postEvents(t, f.env, f.org.PublishableKey,
		exposure(theirs.ID, "u", "control", now), exposure("theirs", "u", "control", now), exposure("exp", "u", "control", now)))
	if a.Accepted != 1 || len(a.Rejected) != 2 || !strings.HasPrefix(a.Rejected[0].Reason, "experiment_id:") || !strings.HasPrefix(a.Rejected[1].Reason, "experiment_id:") {
		t.Fatalf("ack %+v: want the other org's experiment rejected by id and by name", a)
	}
	if n := countRows(t, f.env, "experiment_id = ?", theirs.ID); n != 0 {
		t.Fatalf("%d events stored under another org's experiment", n)
	}
}

func TestEventsSameBatchConcurrentlyIsStoredOnce(t *testing.T) {
	f := newIngestFixture(t)
	batch := make([]map[string]any, 100)
	for i := range batch {
		batch[i] = exposure("exp", fmt.Sprintf("user-%d", i), "control", time.Now())
	}
	batch = append(batch, batch[7]) // a repeat inside the batch, too
	acks := make([]ackBody, 3)
	var wg sync.WaitGroup
	for i := range acks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acks[i] = accepted(t, postEvents(t, f.env, f.org.PublishableKey, batch...))
		}()
	}
	wg.Wait()
	total, dups := 0, 0
	for _, a := range acks {
		total += a.Accepted
		dups += a.Duplicates
	}
	if total != 100 || dups != 3*101-100 {
		t.Fatalf("acks %+v: want 100 accepted and %d duplicates in all", acks, 3*101-100)
	}
	if n := countRows(t, f.env, "org_id = ?", f.org.ID); n != 100 {
		t.Fatalf("%d rows, want 100", n)
	}
	used, err := ingest.MonthlyUsage(t.Context(), f.env.DB, f.org.ID, time.Now())
	if err != nil || used != 100 {
		t.Fatalf("usage %d (%v), want 100: duplicates are not counted", used, err)
	}
}

func TestEventsFirstExposurePins(t *testing.T) {
	f := newIngestFixture(t)
	now := time.Now()
	// In one batch the earliest exposure wins; later batches keep the pin.
	accepted(t, postEvents(t, f.env, f.org.PublishableKey,
		exposure("exp", "u", "concise", now.Add(-time.Minute)), exposure("exp", "u", "control", now.Add(-2*time.Minute))))
	accepted(t, postEvents(t, f.env, f.org.PublishableKey, exposure("exp", "u", "concise", now.Add(-3*time.Minute))))
	var pin assignments.Assignment
	if err := f.env.DB.Where("experiment_id = ? AND user_id = ?", f.exp.ID, "u").Take(&pin).Error; err != nil {
		t.Fatal(err)
	}
	if pin.Variant != "control" {
		t.Fatalf("pinned %q, want control (the first exposure recorded)", pin.Variant)
	}
}

func TestEventsMonthlyAllowance(t *testing.T) {
	f := newIngestFixture(t)
	allowance := plans.Get(plans.Free).MonthlyEventAllowance
	month := ingest.MonthOf(time.Now())
	if err := f.env.DB.Exec("INSERT INTO event_usage (org_id, month, events) VALUES (?, ?, ?)", f.org.ID, month, allowance-50).Error; err != nil {
		t.Fatal(err)
	}
	batch := func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = exposure("exp", uuid.NewString(), "control", time.Now())
		}
		return out
	}
	r := postEvents(t, f.env, f.org.PublishableKey, batch(51)...)
	p := testenv.ExpectProblem(t, r, 429)
	if p.Code != "event_allowance_exceeded" || !strings.Contains(p.Detail, "monthly_event_allowance") || !strings.Contains(p.Detail, fmt.Sprint(allowance)) {
		t.Fatalf("problem %+v: want it to name the allowance", p)
	}
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	if n := countRows(t, f.env, "org_id = ?", f.org.ID); n != 0 {
		t.Fatalf("%d rows of a refused batch stored: half-accepted", n)
	}
	exact := batch(50)
	if a := accepted(t, postEvents(t, f.env, f.org.PublishableKey, exact...)); a.Accepted != 50 {
		t.Fatalf("ack %+v, want 50 accepted up to the allowance", a)
	}
	testenv.ExpectProblem(t, postEvents(t, f.env, f.org.PublishableKey, batch(1)...), 429)
	// Retries of stored events cost nothing, so they still succeed.
	if a := accepted(t, postEvents(t, f.env, f.org.PublishableKey, exact...)); a.Duplicates != 50 {
		t.Fatalf("retry at the limit: %+v", a)
	}
	used, err := ingest.MonthlyUsage(t.Context(), f.env.DB, f.org.ID, time.Now())
	if err != nil || used != allowance {
		t.Fatalf("usage %d (%v), want %d", used, err, allowance)
	}
}

func TestEventsRateLimited(t *testing.T) {
	f := newIngestFixture(t, func(d *api.Deps) {
		d.RateLimits = ratelimit.New(ratelimit.Overrides{plans.Free: {PerSecond: 0.1, Burst: 2}}, nil)
	})
	statuses := map[int]int{}
	var last testenv.Response
	for i := 0; i < 4; i++ {
		last = postEvents(t, f.env, f.org.PublishableKey, exposure("exp", "u", "control", time.Now()))
		statuses[last.Status]++
	}
	if statuses[202] != 2 || statuses[429] != 2 {
		t.Fatalf("statuses %v, want 2 accepted then 2 limited", statuses)
	}
	testenv.ExpectProblem(t, last, 429)
	if last.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}
