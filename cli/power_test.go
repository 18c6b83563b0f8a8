package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// `expd experiments power` sends the flags given (0 too, so the server
// names what it refuses) and prints the answer's numbers per metric.
func TestExperimentsPowerSendsTheQuestionAndPrintsTheAnswer(t *testing.T) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/experiments/checkout/power" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusTeapot)
			return
		}
		queries = append(queries, r.URL.RawQuery)
		if r.URL.Query().Get("days") == "0" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"type":"x","title":"Bad Request","status":400,"detail":"invalid","code":"validation_failed","errors":[{"field":"days","reason":"must be a whole number of days from 1 to 3650"}]}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"source":"experiment","users_per_day":250,"days":null,"mde":0.05,"n_star":5000,"n_star_source":"default",
"metrics":[{"metric":"conversion","variant":"concise","baseline":0.1,
"fixed_horizon":{"users":11800,"mde_absolute":0.005,"mde_relative":0.05,"days":47.2},
"sequential":{"users":23600,"mde_absolute":0.005,"mde_relative":0.05,"days":94.4},"sequential_cost":2}]}`))
	}))
	defer srv.Close()
	env := map[string]string{"EXPD_URL": srv.URL, "EXPD_TOKEN": "tok", "XDG_CONFIG_HOME": t.TempDir()}
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), "experiments", args, IO{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }})
		return code, out.String() + errOut.String()
	}
	code, out := run("power", "checkout", "--mde", "0.05", "--table")
	if code != ExitOK || !strings.Contains(out, "47.2 days") || !strings.Contains(out, "94.4 days") || !strings.Contains(out, "2x users") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if code, out = run("power", "checkout", "--days", "0"); code != ExitRejected || !strings.Contains(out, "days") {
		t.Fatalf("--days 0: exit %d:\n%s", code, out)
	}
	if len(queries) != 2 || queries[0] != "mde=0.05" || queries[1] != "days=0" {
		t.Fatalf("queries sent: %q", queries)
	}
}
