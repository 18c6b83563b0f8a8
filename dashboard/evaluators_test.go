package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/internal/testenv"
)

func TestEvaluatorPagesShowSpendReasonsAndFailures(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	spec := map[string]any{"name": "valid-json", "score": "json_ok", "kind": "code", "experiments": []string{},
		"sampling_rate": 0.5, "daily_budget": map[string]any{"max_evaluations": 100}, "check": map[string]any{"type": "json_valid"}}
	var ev struct{ ID string }
	env.Do(t, http.MethodPost, "/v1/evaluators", spec, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusCreated, &ev)
	now := time.Now().UTC()
	one, zero := 1.0, 0.0
	for _, o := range []evaluators.Outcome{
		{CallID: "c-1", Score: &one, Reason: "<b>valid</b> JSON", At: now},
		{CallID: "c-2", Score: &zero, Reason: "not JSON", At: now.Add(-time.Second)},
		{CallID: "c-3", Failure: evaluators.FailUnparseable, Detail: "<script>x</script> answer", At: now.Add(-2 * time.Second)},
		{CallID: "c-4", Score: &one, CostUSD: 0.25, At: now.AddDate(0, 0, -1)},
	} {
		o.OrgID, o.EvaluatorID, o.Version = org.ID, ev.ID, 1
		if _, err := evaluators.Record(t.Context(), env.DB, o); err != nil {
			t.Fatal(err)
		}
	}
	v := newVisitor(t, env, org.MemberToken)
	expect(t, v.get("/evaluators"), http.StatusOK, `href="/evaluators/`+ev.ID+`"`, "valid-json", "50%", "3 of 100 evaluations")
	p := v.get("/evaluators/" + ev.ID)
	expect(t, p, http.StatusOK, "<strong>3</strong> of 100 evaluations", "&lt;b&gt;valid&lt;/b&gt; JSON", "<strong>unparseable</strong>: &lt;script&gt;x&lt;/script&gt; answer",
		now.Format(time.DateOnly), now.AddDate(0, 0, -1).Format(time.DateOnly), `&#34;type&#34;: &#34;json_valid&#34;`)
	expectNot(t, p, "<b>valid", "<script>x", "api_key")
	if n := strings.Count(p.Body, "<code>c-"); n != 4 {
		t.Fatalf("%d evaluations shown, want 4", n)
	}
	failed := v.get("/evaluators/" + ev.ID + "?status=failed")
	expect(t, failed, http.StatusOK, "<code>c-3</code>")
	if strings.Count(failed.Body, "<code>c-") != 1 {
		t.Fatal("the failures filter shows scored evaluations")
	}
	expect(t, v.get("/evaluators/"+ev.ID+"?status=maybe"), http.StatusBadRequest, "Unknown filter")
	expect(t, v.get("/evaluators/"+ev.ID+"?cursor=nope"), http.StatusBadRequest, "Unknown page")
	other := env.NewOrg(t)
	expect(t, newVisitor(t, env, other.AdminToken).get("/evaluators/"+ev.ID), http.StatusNotFound, "No such evaluator")
	expect(t, newVisitor(t, env, other.AdminToken).get("/evaluators"), http.StatusOK, "No evaluators yet")
}
