package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
)

func postScores(t *testing.T, env *testenv.Env, key string, scores ...map[string]any) testenv.Response {
	t.Helper()
	return env.Do(t, "POST", "/v1/scores", map[string]any{"scores": scores}, testenv.APIKey(key)...)
}

func score(callID, name string, value any, at time.Time) map[string]any {
	return map[string]any{"call_id": callID, "name": name, "value": value, "timestamp": stamp(at)}
}

// storedScore is a row of the scores table as the tests read it.
type storedScore struct {
	CallID, Name, Source string
	Value                float64
	Comment              *string
}

func storedScores(t *testing.T, env *testenv.Env, orgID string) map[string]storedScore {
	t.Helper()
	var rows []storedScore
	if err := env.DB.Table("scores").Where("org_id = ?", orgID).Select("call_id, name, source, value, comment").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := make(map[string]storedScore, len(rows))
	for _, r := range rows {
		out[r.CallID+"/"+r.Name+"/"+r.Source] = r
	}
	return out
}

// Model calls through /v1/events and human scores through /v1/scores: a
// replacement by a later score, an identical re-send, a stale score, a
// score before its call and an orphan; only new keys count as usage.
func TestScoresStoreReplaceAndCountOnce(t *testing.T) {
	f := newIngestFixture(t)
	key := f.org.PublishableKey
	now := time.Now().Add(-time.Hour)
	c1, c2 := modelCall("exp", "u1", now), modelCall("exp", "u2", now)
	accepted(t, postEvents(t, f.env, key, exposure("exp", "u1", "control", now), exposure("exp", "u2", "concise", now), c1, c2))
	id1, id2 := c1["event_id"].(string), c2["event_id"].(string)
	early := uuid.NewString() // its call is sent after its score
	orphan := uuid.NewString()

	thumb := score(id1, "thumbs_up", true, now.Add(time.Minute))
	thumb["comment"] = "great answer"
	a := accepted(t, postScores(t, f.env, key, thumb, score(id2, "thumbs_up", false, now.Add(time.Minute)),
		score(early, "thumbs_up", 1, now.Add(time.Minute)), score(orphan, "thumbs_up", 1, now.Add(time.Minute))))
	if a.Accepted != 4 || a.Duplicates != 0 || a.ConfigVersion != f.exp.ConfigVersion || a.Rejected == nil {
		t.Fatalf("ack %+v, want 4 accepted", a)
	}
	// The same score again changes nothing.
	if a := accepted(t, postScores(t, f.env, key, thumb)); a.Accepted != 0 || a.Duplicates != 1 {
		t.Fatalf("re-send: %+v, want a duplicate", a)
	}
	// A later score of the same key replaces it; an older one does not.
	if a := accepted(t, postScores(t, f.env, key, score(id1, "thumbs_up", false, now.Add(2*time.Minute)))); a.Accepted != 1 {
		t.Fatalf("later score: %+v, want accepted", a)
	}
	if a := accepted(t, postScores(t, f.env, key, score(id1, "thumbs_up", true, now))); a.Duplicates != 1 {
		t.Fatalf("stale score: %+v, want a duplicate", a)
	}
	// In one batch, the later of two scores of a key wins, whatever the order.
	if a := accepted(t, postScores(t, f.env, key, score(id2, "thumbs_up", 1, now.Add(5*time.Minute)), score(id2, "thumbs_up", 0, now.Add(3*time.Minute)))); a.Accepted != 1 || a.Duplicates != 1 {
		t.Fatalf("two scores of a key: %+v", a)
	}
	// Another source is another score of the same call.
	judged := score(id1, "thumbs_up", 0.5, now)
	judged["source"], judged["judge_model"], judged["evaluator"] = "judge", "gpt-judge", "helpfulness-v1"
	if a := accepted(t, postScores(t, f.env, f.org.SecretKey, judged)); a.Accepted != 1 {
		t.Fatalf("judge score: %+v", a)
	}
	late := modelCall("exp", "u1", now)
	late["event_id"] = early
	accepted(t, postEvents(t, f.env, key, late))

	got := storedScores(t, f.env, f.org.ID)
	want := map[string]float64{id1 + "/thumbs_up/human": 0, id2 + "/thumbs_up/human": 1, early + "/thumbs_up/human": 1,
		orphan + "/thumbs_up/human": 1, id1 + "/thumbs_up/judge": 0.5}
	if len(got) != len(want) {
		t.Fatalf("stored %+v, want %v", got, want)
	}
	for k, v := range want {
		if s, ok := got[k]; !ok || s.Value != v {
			t.Errorf("%s: stored %+v, want value %v", k, s, v)
		}
	}
	// The replacement replaced the whole score: its comment went with it.
	if c := got[id1+"/thumbs_up/human"].Comment; c != nil {
		t.Errorf("replaced score kept comment %q", *c)
	}
	used, err := ingest.MonthlyUsage(t.Context(), f.env.DB, f.org.ID, time.Now())
	if err != nil || used != 5+5 {
		t.Fatalf("usage %d (%v), want 5 events + 5 distinct scores", used, err)
	}
}

// A publishable key (a browser's) may send human scores only; the secret
// key may send any source.
func TestScoresJudgeNeedsTheSecretKey(t *testing.T) {
	f := newIngestFixture(t)
	call := uuid.NewString()
	judged := score(call, "helpfulness", 4, time.Now())
	judged["source"] = "judge"
	coded := score(call, "valid_json", true, time.Now())
	coded["source"] = "code"
	r := postScores(t, f.env, f.org.PublishableKey, score(call, "thumbs_up", 1, time.Now()), judged, coded)
	p := testenv.ExpectProblem(t, r, http.StatusForbidden)
	if p.Code != "secret_key_required" || !p.HasFieldError("scores[1].source") || !p.HasFieldError("scores[2].source") || p.HasFieldError("scores[0].source") {
		t.Fatalf("problem %+v", p)
	}
	if n := len(storedScores(t, f.env, f.org.ID)); n != 0 {
		t.Fatalf("%d scores of a refused batch stored", n)
	}
	if a := accepted(t, postScores(t, f.env, f.org.SecretKey, judged, coded)); a.Accepted != 2 {
		t.Fatalf("secret key: %+v", a)
	}
	// Human scores with the publishable key are fine.
	if a := accepted(t, postScores(t, f.env, f.org.PublishableKey, score(call, "thumbs_up", 1, time.Now()))); a.Accepted != 1 {
		t.Fatalf("publishable key, human score: %+v", a)
	}
}

// Malformed scores are a 400 naming the field, and nothing of the batch
// is stored.
func TestScoresBadInput(t *testing.T) {
	f := newIngestFixture(t)
	key := testenv.APIKey(f.org.PublishableKey)
	ok := fmt.Sprintf(`{"call_id": %q, "name": "thumbs_up", "value": 1}`, uuid.NewString())
	batch := func(bad string) string { return `{"scores": [` + ok + `, ` + bad + `]}` }
	for name, c := range map[string]struct{ body, field string }{
		"no call_id":        {batch(`{"name": "thumbs_up", "value": 1}`), "scores[1].call_id"},
		"call_id spaces":    {batch(`{"call_id": "a b", "name": "thumbs_up", "value": 1}`), "scores[1].call_id"},
		"call_id number":    {batch(`{"call_id": 7, "name": "thumbs_up", "value": 1}`), "scores[1].call_id"},
		"no name":           {batch(`{"call_id": "c", "value": 1}`), "scores[1].name"},
		"bad name":          {batch(`{"call_id": "c", "name": "thumbs up!", "value": 1}`), "scores[1].name"},
		"no value":          {batch(`{"call_id": "c", "name": "n"}`), "scores[1].value"},
		"null value":        {batch(`{"call_id": "c", "name": "n", "value": null}`), "scores[1].value"},
		"NaN":               {batch(`{"call_id": "c", "name": "n", "value": NaN}`), "scores[1].value"},
		"Infinity":          {batch(`{"call_id": "c", "name": "n", "value": Infinity}`), "scores[1].value"},
		"-Infinity":         {batch(`{"call_id": "c", "name": "n", "value": -Infinity}`), "scores[1].value"},
		"overflow":          {batch(`{"call_id": "c", "name": "n", "value": 1e999}`), "scores[1].value"},
		"string value":      {batch(`{"call_id": "c", "name": "n", "value": "5"}`), "scores[1].value"},
		"object value":      {batch(`{"call_id": "c", "name": "n", "value": {"v": 1}}`), "scores[1].value"},
		"NUL in comment":    {batch(`{"call_id": "c", "name": "n", "value": 1, "comment": "a\u0000b"}`), "scores[1].comment"},
		"NUL in call_id":    {batch(`{"call_id": "c\u0000", "name": "n", "value": 1}`), "scores[1].call_id"},
		"oversized comment": {batch(`{"call_id": "c", "name": "n", "value": 1, "comment": "` + strings.Repeat("x", 4097) + `"}`), "scores[1].comment"},
		"bad source":        {batch(`{"call_id": "c", "name": "n", "value": 1, "source": "robot"}`), "scores[1].source"},
		"judge_model human": {batch(`{"call_id": "c", "name": "n", "value": 1, "judge_model": "m"}`), "scores[1].judge_model"},
		"bad timestamp":     {batch(`{"call_id": "c", "name": "n", "value": 1, "timestamp": "yesterday"}`), "scores[1].timestamp"},
		"old timestamp":     {batch(`{"call_id": "c", "name": "n", "value": 1, "timestamp": "` + stamp(time.Now().Add(-25*time.Hour)) + `"}`), "scores[1].timestamp"},
		"not an object":     {batch(`3`), "scores[1]"},
		"empty list":        {`{"scores": []}`, "scores"},
		"no list":           {`{"events": []}`, "scores"},
	} {
		p := testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/scores", c.body, key...), http.StatusBadRequest)
		if p.Code != "validation_failed" || !p.HasFieldError(c.field) {
			t.Errorf("%s: %+v, want validation_failed naming %s", name, p, c.field)
		}
	}
	for _, body := range []string{`{"scores": [`, `[{"call_id": "c"}]`, `{"scores": [` + ok + `]} {}`, `{"scores": [{"call_id": NaNa}]}`} {
		if p := testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/scores", body, key...), http.StatusBadRequest); p.Code != "malformed_json" {
			t.Errorf("body %q: %+v, want malformed_json", body, p)
		}
	}
	many := make([]map[string]any, 1001)
	for i := range many {
		many[i] = score(fmt.Sprint(i), "n", 1, time.Now())
	}
	if p := testenv.ExpectProblem(t, postScores(t, f.env, f.org.PublishableKey, many...), http.StatusBadRequest); !p.HasFieldError("scores") {
		t.Fatalf("1001 scores: %+v", p)
	}
	big := score("c", "n", 1, time.Now())
	big["padding"] = strings.Repeat("x", 1<<20)
	if p := testenv.ExpectProblem(t, postScores(t, f.env, f.org.PublishableKey, big), http.StatusRequestEntityTooLarge); p.Code != "body_too_large" {
		t.Fatalf("oversized body: %+v", p)
	}
	for name, hdr := range map[string][]string{
		"missing":     nil,
		"garbage":     testenv.APIKey("pk_nope"),
		"session jwt": testenv.Bearer(f.org.AdminToken),
		"unknown key": testenv.APIKey("sk_" + strings.Repeat("A", 43)),
	} {
		r := f.env.Do(t, "POST", "/v1/scores", map[string]any{"scores": []any{score("c", "n", 1, time.Now())}}, hdr...)
		if p := testenv.ExpectProblem(t, r, http.StatusUnauthorized); p.Code != "unauthorized" {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if n := len(storedScores(t, f.env, f.org.ID)); n != 0 {
		t.Fatalf("%d scores stored by refused requests", n)
	}
}

// Scores count against the monthly allowance like events; a replacement
// of a stored score is free, so it still succeeds at the limit.
func TestScoresMonthlyAllowance(t *testing.T) {
	f := newIngestFixture(t)
	allowance := plans.Get(plans.Free).MonthlyEventAllowance
	if err := f.env.DB.Exec("INSERT INTO event_usage (org_id, month, events) VALUES (?, ?, ?)", f.org.ID, ingest.MonthOf(time.Now()), allowance-2).Error; err != nil {
		t.Fatal(err)
	}
	key := f.org.PublishableKey
	a, b, c := uuid.NewString(), uuid.NewString(), uuid.NewString()
	p := testenv.ExpectProblem(t, postScores(t, f.env, key, score(a, "n", 1, time.Now()), score(b, "n", 1, time.Now()), score(c, "n", 1, time.Now())), http.StatusTooManyRequests)
	if p.Code != "event_allowance_exceeded" {
		t.Fatalf("problem %+v", p)
	}
	if got := accepted(t, postScores(t, f.env, key, score(a, "n", 1, time.Now()), score(b, "n", 1, time.Now()))); got.Accepted != 2 {
		t.Fatalf("up to the allowance: %+v", got)
	}
	testenv.ExpectProblem(t, postScores(t, f.env, key, score(c, "n", 1, time.Now())), http.StatusTooManyRequests)
	if got := accepted(t, postScores(t, f.env, key, score(a, "n", 0, time.Now().Add(time.Second)))); got.Accepted != 1 {
		t.Fatalf("replacement at the limit: %+v", got)
	}
	used, err := ingest.MonthlyUsage(t.Context(), f.env.DB, f.org.ID, time.Now())
	if err != nil || used != allowance {
		t.Fatalf("usage %d (%v), want %d", used, err, allowance)
	}
}
