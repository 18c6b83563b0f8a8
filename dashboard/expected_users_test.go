package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
)

// The create form asks for expected_users, prefilled with the org's
// distinct exposed users of the last 14 days (empty without traffic); a
// started experiment's edit form shows it read-only.
func TestFormAsksForExpectedUsers(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	v := newVisitor(t, env, org.AdminToken)
	input := func(path string) string {
		p := v.get(path)
		expect(t, p, http.StatusOK)
		i := strings.Index(p.Body, `<input id="expected_users"`)
		if i < 0 {
			t.Fatalf("no expected_users input:\n%.500s", p.Body)
		}
		return p.Body[i : i+strings.Index(p.Body[i:], ">")]
	}
	if in := input("/experiments/new"); !strings.Contains(in, `value=""`) {
		t.Fatalf("no traffic yet, yet prefilled: %s", in)
	}
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("traffic"))
	users := resultstest.Users(60, 3) // 60 per arm: 120 exposed users
	resultstest.Insert(t, env.DB, resultstest.Events(org.ID, exp.ID, users, time.Now().Add(-time.Hour)))
	if in := input("/experiments/new"); !strings.Contains(in, `value="120"`) || strings.Contains(in, "readonly") {
		t.Fatalf("want the 120 recent users, editable: %s", in)
	}
	if in := input("/experiments/" + exp.ID + "/edit"); !strings.Contains(in, "readonly") {
		t.Fatalf("a running experiment's expected_users is editable: %s", in)
	}
}
