package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
)

// explorerFixture is an experiment with model calls in both arms, one
// with a 64 KiB hostile response, and a judge's score with a hostile reason.
type explorerFixture struct {
	env     *testenv.Env
	org     testenv.Org
	expID   string
	calls   map[string][]string // arm -> call ids, oldest first
	hostile string
}

func newExplorerFixture(t *testing.T) explorerFixture {
	t.Helper()
	env := testenv.New(t)
	org := env.NewOrg(t)
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("explorer"))
	f := explorerFixture{env: env, org: org, expID: exp.ID, calls: map[string][]string{},
		hostile: "<script>alert('x')</script><img src=x onerror=alert(1)>" + strings.Repeat("y", 64<<10-60)}
	at := time.Now().Add(-time.Hour)
	var events []map[string]any
	for i := range 6 {
		arm := resultstest.Arms[i%2]
		id := uuid.NewString()
		ev := map[string]any{"event_id": id, "type": "model_call", "experiment_id": exp.ID, "user_id": fmt.Sprintf("u%d", i),
			"variant": arm, "timestamp": at.Add(time.Duration(i) * time.Second).UTC().Format(time.RFC3339Nano),
			"model": "gpt-x", "latency_ms": 100 + i, "prompt": fmt.Sprintf("question %d", i), "response": fmt.Sprintf("answer %d", i)}
		if i == 3 {
			ev["response"] = f.hostile
		}
		f.calls[arm] = append(f.calls[arm], id)
		events = append(events, ev)
	}
	if r := env.Do(t, "POST", "/v1/events", map[string]any{"events": events}, testenv.APIKey(org.PublishableKey)...); r.Status != http.StatusAccepted {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	judged := map[string]any{"call_id": f.calls["treatment"][1], "name": "helpfulness", "value": 0.25, "source": "judge",
		"evaluator": "helpful-judge", "evaluator_version": "3", "judge_model": "judge-m", "comment": "<b>vague</b> answer"}
	if r := env.Do(t, "POST", "/v1/scores", map[string]any{"scores": []any{judged}}, testenv.APIKey(org.SecretKey)...); r.Status != http.StatusAccepted {
		t.Fatalf("scores: %d %s", r.Status, r.Body)
	}
	return f
}

func TestCallExplorerShowsCallsSideBySideEscaped(t *testing.T) {
	f := newExplorerFixture(t)
	v := newVisitor(t, f.env, f.org.MemberToken)
	path := "/experiments/" + f.expID + "/calls"
	p := v.get(path)
	expect(t, p, http.StatusOK, `id="col-control"`, `id="col-treatment"`, "question 0", "answer 5",
		"&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;", "&lt;b&gt;vague&lt;/b&gt; answer", "judge · helpful-judge v3 · judge-m")
	expectNot(t, p, "<script>alert", "<img src=x", "<b>vague")
	if n := strings.Count(p.Body, "<script"); n != 1 {
		t.Fatalf("%d script tags, want the dashboard's one", n)
	}
	// Side by side: every call sits in its own arm's column.
	control, treatment := strings.Index(p.Body, `id="col-control"`), strings.Index(p.Body, `id="col-treatment"`)
	for arm, ids := range f.calls {
		for _, id := range ids {
			at := strings.Index(p.Body, `id="call-`+id+`"`)
			if in := at > treatment; at < 0 || at < control || in != (arm == "treatment") {
				t.Errorf("call %s of %s is not in its column", id, arm)
			}
		}
	}
	// Filtered to one arm and a score range: the one judged call.
	q := url.Values{"variant": {"treatment"}, "score": {"helpfulness"}, "score_max": {"0.5"}}
	p = v.get(path + "?" + q.Encode())
	expect(t, p, http.StatusOK, `id="call-`+f.calls["treatment"][1]+`"`)
	if n := strings.Count(p.Body, `<article class="call"`); n != 1 || strings.Contains(p.Body, `id="col-control"`) {
		t.Fatalf("filtered page shows %d calls (or the control column)", n)
	}
	// A bad filter names its field; another org's experiment is unknown.
	expect(t, v.get(path+"?score_min=abc&score=h"), http.StatusBadRequest, "<code>score_min</code>")
	other := f.env.NewOrg(t)
	expect(t, newVisitor(t, f.env, other.AdminToken).get(path), http.StatusNotFound, "No such experiment")
}

func TestCallExplorerReviewStoresAHumanScore(t *testing.T) {
	f := newExplorerFixture(t)
	v := newVisitor(t, f.env, f.org.MemberToken)
	path := "/experiments/" + f.expID + "/calls"
	call := f.calls["control"][0]
	review := func(value, name string) page {
		return v.post(path, path+"/review", url.Values{"call_id": {call}, "name": {name}, "value": {value}, "comment": {"checked by hand"}, "back": {"variant=control"}})
	}
	p := review("0.75", "helpfulness")
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != path+"?variant=control#call-"+call {
		t.Fatalf("review answered %d, Location %q", p.Status, p.Header.Get("Location"))
	}
	var row struct {
		Source, Evaluator, Comment string
		Value                      float64
	}
	if err := f.env.DB.Table("scores").Where("org_id = ? AND call_id = ? AND name = ?", f.org.ID, call, "helpfulness").
		Select("source, evaluator, comment, value").Take(&row).Error; err != nil {
		t.Fatal(err)
	}
	reviewer := "user_member_" // testenv's member ids start so
	if row.Source != "human" || row.Value != 0.75 || !strings.HasPrefix(row.Evaluator, reviewer) || row.Comment != "checked by hand" {
		t.Fatalf("stored review %+v", row)
	}
	expect(t, v.get(path+"?variant=control"), http.StatusOK, "human · "+row.Evaluator, "checked by hand")
	// A correction replaces it; bad reviews store nothing.
	review("1", "helpfulness")
	var n int64
	f.env.DB.Table("scores").Where("org_id = ? AND call_id = ?", f.org.ID, call).Count(&n)
	if n != 1 {
		t.Fatalf("%d scores after a correction, want 1", n)
	}
	expect(t, review("abc", "helpfulness"), http.StatusBadRequest, "must be a number")
	expect(t, review("NaN", "helpfulness"), http.StatusBadRequest, "value must be a finite number")
	expect(t, review("1", "bad name!"), http.StatusBadRequest, "name must be")
	f.env.DB.Table("scores").Where("org_id = ? AND call_id = ?", f.org.ID, call).Count(&n)
	if n != 1 {
		t.Fatalf("%d scores after refused reviews, want 1", n)
	}
}
