package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/stats"
)

// visitor is a browser without script: a cookie jar and, optionally, a
// session token sent as Authorization: Bearer.
type visitor struct {
	t      testing.TB
	base   string
	client *http.Client
	token  string
}

func newVisitor(t testing.TB, env *testenv.Env, token string) *visitor {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &visitor{t: t, base: env.Server.URL, client: c, token: token}
}

type page struct {
	Status int
	Header http.Header
	Body   string
}

func (v *visitor) do(req *http.Request) page {
	v.t.Helper()
	if v.token != "" {
		req.Header.Set("Authorization", "Bearer "+v.token)
	}
	resp, err := v.client.Do(req)
	if err != nil {
		v.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

func (v *visitor) get(path string) page {
	v.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, v.base+path, nil)
	return v.do(req)
}

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// post submits a form the way the page would: with the CSRF token a GET
// of the page handed out (from) and the same-origin Origin header.
func (v *visitor) post(from, path string, form url.Values) page {
	v.t.Helper()
	m := csrfInput.FindStringSubmatch(v.get(from).Body)
	if m == nil {
		v.t.Fatalf("no csrf token on %s", from)
	}
	form.Set("csrf_token", m[1])
	return v.postRaw(path, form, v.base)
}

func (v *visitor) postRaw(path string, form url.Values, origin string) page {
	v.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, v.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return v.do(req)
}

func expect(t testing.TB, p page, status int, contains ...string) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status %d, want %d; body:\n%s", p.Status, status, p.Body)
	}
	for _, s := range contains {
		if !strings.Contains(p.Body, s) {
			t.Fatalf("page lacks %q; body:\n%s", s, p.Body)
		}
	}
}

func expectNot(t testing.TB, p page, absent ...string) {
	t.Helper()
	for _, s := range absent {
		if strings.Contains(p.Body, s) {
			t.Fatalf("page has %q but should not", s)
		}
	}
}

// publishRun stores a completed run through the results package's own
// writers (the ones the pipeline's activities call), with rows for each
// metric against one treatment arm. gate is the SRM gate.
func publishRun(t testing.TB, db *gorm.DB, orgID, experimentID, computedFor, gate string, metrics []string, arms []string) {
	t.Helper()
	ctx := context.Background()
	end := time.Now().UTC().Truncate(time.Second)
	run := results.Run{ExperimentID: experimentID, ComputedFor: computedFor, OrgID: orgID, Kind: results.KindManual,
		WorkflowID: "results/" + experimentID + "/" + computedFor, Status: results.StatusRunning, ExperimentVersion: 1,
		WindowStart: end.Add(-10 * 24 * time.Hour), WindowEnd: end, WindowDays: 10, StartedAt: end}
	if err := results.StartRun(ctx, db, run); err != nil {
		t.Fatal(err)
	}
	var rows []results.Row
	for i, m := range metrics {
		for j, arm := range arms {
			effect := float64(i%3-1) * (1 + float64(j)) // negative, zero-ish, positive
			lift, lo, hi := effect/10, effect/10-0.05, effect/10+0.05
			r := results.Row{ExperimentID: experimentID, ComputedFor: computedFor, OrgID: orgID, Metric: m, Variant: arm,
				ControlVariant: "control", MetricVersion: 1, Category: "primary", Kind: "mean", Origin: "builtin",
				Test: "welch_t", Statistic: effect, PValue: pFor(effect), Effect: effect, CILow: effect - 0.5, CIHigh: effect + 0.5,
				RelLift: &lift, RelCILow: &lo, RelCIHigh: &hi, NControl: 1200, NTreatment: 1180, WindowDays: 10,
				SampleCapUsed: i == 0, Preliminary: gate != stats.GatePass,
				Distribution: []byte(fmt.Sprintf(`{"edges":[0,1,2,3],"arms":{"control":{"n":1200,"mean":1.4,"sd":0.7,"min":0,"max":3,"p5":0.1,"p25":0.8,"p50":1.4,"p75":2,"p95":2.8,"histogram":[300,600,300]},%q:{"n":1180,"mean":1.6,"sd":0.7,"min":0,"max":3,"p5":0.2,"p25":1,"p50":1.6,"p75":2.2,"p95":2.9,"histogram":[200,580,400]}}}`, arm)),
				ComputedAt:   end}
			if i == 1 && j == 0 { // one row carries the sequential, CUPED and non-inferiority details
				r.Sequential = true
				r.Analysis = []byte(`{"inference":"sequential","other_mode":{"mode":"fixed_horizon","p_value":0.2,"ci_low":-0.3,"ci_high":0.3},` +
					`"cuped":true,"theta":0.8,"variance_reduction":0.23,"crossover_users":{"control":30,"treatment":25},"crossover_health":"fail",` +
					`"warnings":["ties are heavy: the rank test is conservative"],"non_inferiority":{"margin":0.05,"type":"relative","bad_direction":"lower","p_value":0.01,"decision":"non_inferior"}}`)
			}
			rows = append(rows, r)
		}
	}
	srm := results.SRMSummary{Gate: gate, PValue: 0.3, Observed: map[string]int64{"control": 1200, arms[0]: 1180}, Weights: map[string]float64{"control": 50, arms[0]: 50}}
	if gate == stats.GateFail {
		srm.PValue, srm.Observed[arms[0]] = 1e-9, 700
	}
	if err := results.Stage(ctx, db, experimentID, computedFor, results.Analysis{Rows: rows, SRM: srm}); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Publish(ctx, db, experimentID, computedFor, end); err != nil {
		t.Fatal(err)
	}
}

// pFor makes every non-zero effect clearly significant.
func pFor(effect float64) float64 {
	if effect == 0 {
		return 0.6
	}
	return 0.001
}
