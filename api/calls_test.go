package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
)

type callScore struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Source    string  `json:"source"`
	Evaluator *string `json:"evaluator"`
	Comment   *string `json:"comment"`
}

type explorerCall struct {
	CallID   string      `json:"call_id"`
	UserID   string      `json:"user_id"`
	Variant  string      `json:"variant"`
	Model    *string     `json:"model"`
	Error    *string     `json:"error"`
	Response *string     `json:"response"`
	Scores   []callScore `json:"scores"`
}

type callsPage struct {
	ExperimentID string         `json:"experiment_id"`
	Calls        []explorerCall `json:"calls"`
	NextCursor   string         `json:"next_cursor"`
}

func readCalls(t *testing.T, f ingestFixture, token string, query url.Values) callsPage {
	t.Helper()
	var p callsPage
	f.env.Do(t, "GET", "/v1/experiments/"+f.exp.ID+"/calls?"+query.Encode(), nil, testenv.Bearer(token)...).ExpectJSON(t, http.StatusOK, &p)
	return p
}

func callIDsOf(p callsPage) []string {
	ids := make([]string, len(p.Calls))
	for i, c := range p.Calls {
		ids[i] = c.CallID
	}
	return ids
}

// exploredCall is what the test sent for one call.
type exploredCall struct {
	id, variant, model string
	failed             bool
	helpfulness        *float64
	at                 time.Time
}

// TestCallsFiltersPagesAndScores: 12 calls over two variants and two
// models, some failed, some scored; every filter returns exactly the calls
// the test computes from what it sent, pages cover them once each, and
// another org's experiment and scores stay out.
func TestCallsFiltersPagesAndScores(t *testing.T) {
	f := newIngestFixture(t)
	base := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	hostile := "<script>alert(1)</script><b>bold</b>" + strings.Repeat("x", 64<<10-40)
	var sent []exploredCall
	var events []map[string]any
	var scoreBatch []map[string]any
	for i := range 12 {
		c := exploredCall{variant: []string{"control", "concise"}[i%2], model: []string{"gpt-x", "claude-y"}[i/6], failed: i%4 == 3,
			at: base.Add(time.Duration(i) * time.Minute)}
		ev := modelCall(f.exp.ID, fmt.Sprintf("u%d", i), c.at)
		ev["variant"], ev["model"] = c.variant, c.model
		if c.failed {
			ev["error"] = "timeout"
		}
		if i == 5 {
			ev["response"] = hostile
		}
		c.id = ev["event_id"].(string)
		if i%3 != 0 {
			v := float64(i) / 12
			c.helpfulness = &v
			s := score(c.id, "helpfulness", v, c.at.Add(time.Second))
			s["source"], s["evaluator"] = "judge", "judge-v1"
			scoreBatch = append(scoreBatch, s)
		}
		sent = append(sent, c)
		events = append(events, ev)
	}
	accepted(t, postEvents(t, f.env, f.org.PublishableKey, events...))
	thumb := score(sent[1].id, "thumbs_up", true, base.Add(time.Hour))
	thumb["comment"] = "great"
	accepted(t, postScores(t, f.env, f.org.SecretKey, append(scoreBatch, thumb)...))
	// Another org scores the same call id: it must not show.
	other := f.env.NewOrg(t)
	accepted(t, postScores(t, f.env, other.SecretKey, score(sent[1].id, "helpfulness", 0.99, base.Add(time.Hour))))

	want := func(keep func(exploredCall) bool) []string {
		var ids []string
		for i := len(sent) - 1; i >= 0; i-- { // newest first
			if keep(sent[i]) {
				ids = append(ids, sent[i].id)
			}
		}
		return ids
	}
	// Paging: pages of 5 cover every call once, newest first.
	var paged []string
	q := url.Values{"limit": {"5"}}
	for pages := 0; ; pages++ {
		p := readCalls(t, f, f.org.MemberToken, q)
		paged = append(paged, callIDsOf(p)...)
		if p.NextCursor == "" {
			if pages != 2 {
				t.Fatalf("%d pages of 5 for 12 calls, want 3", pages+1)
			}
			break
		}
		q.Set("cursor", p.NextCursor)
	}
	if all := want(func(exploredCall) bool { return true }); !slices.Equal(paged, all) {
		t.Fatalf("paged %v\nwant %v", paged, all)
	}
	lo, hi := 0.3, 0.7
	for _, tc := range []struct {
		query url.Values
		keep  func(exploredCall) bool
	}{
		{url.Values{"variant": {"concise"}}, func(c exploredCall) bool { return c.variant == "concise" }},
		{url.Values{"model": {"claude-y"}}, func(c exploredCall) bool { return c.model == "claude-y" }},
		{url.Values{"error": {"true"}}, func(c exploredCall) bool { return c.failed }},
		{url.Values{"error": {"false"}, "variant": {"control"}}, func(c exploredCall) bool { return !c.failed && c.variant == "control" }},
		{url.Values{"score": {"helpfulness"}}, func(c exploredCall) bool { return c.helpfulness != nil }},
		{url.Values{"score": {"helpfulness"}, "score_min": {"0.3"}, "score_max": {"0.7"}},
			func(c exploredCall) bool { return c.helpfulness != nil && *c.helpfulness >= lo && *c.helpfulness <= hi }},
		{url.Values{"score": {"thumbs_up"}, "score_min": {"1"}}, func(c exploredCall) bool { return c.id == sent[1].id }},
		{url.Values{"from": {stamp(base.Add(4 * time.Minute))}, "to": {stamp(base.Add(8 * time.Minute))}},
			func(c exploredCall) bool {
				return !c.at.Before(base.Add(4*time.Minute)) && c.at.Before(base.Add(8*time.Minute))
			}},
	} {
		if got, w := callIDsOf(readCalls(t, f, f.org.MemberToken, tc.query)), want(tc.keep); !slices.Equal(got, w) || len(w) == 0 {
			t.Errorf("%s: got %v, want %v", tc.query.Encode(), got, w)
		}
	}
	// A call carries its scores (this org's only) and its texts as stored.
	byID := map[string]explorerCall{}
	for _, c := range readCalls(t, f, f.org.AdminToken, url.Values{"limit": {"500"}}).Calls {
		byID[c.CallID] = c
	}
	one := byID[sent[1].id]
	if len(one.Scores) != 2 || one.Scores[0].Name != "helpfulness" || one.Scores[0].Source != "judge" || one.Scores[0].Value != *sent[1].helpfulness ||
		*one.Scores[0].Evaluator != "judge-v1" || one.Scores[1].Name != "thumbs_up" || one.Scores[1].Value != 1 || *one.Scores[1].Comment != "great" {
		t.Fatalf("scores of call 1: %+v", one.Scores)
	}
	if c := byID[sent[5].id]; c.Response == nil || *c.Response != hostile || c.Variant != "concise" || *c.Model != "gpt-x" {
		t.Fatalf("call 5 as read: variant %q, response of %d bytes", c.Variant, len(*c.Response))
	}
	if c := byID[sent[3].id]; c.Error == nil || *c.Error != "timeout" || len(c.Scores) != 0 {
		t.Fatalf("failed call 3: %+v", c)
	}
	// Another org's experiment is unknown; credentials are required.
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/"+f.exp.ID+"/calls", nil, testenv.Bearer(other.AdminToken)...), http.StatusNotFound)
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/"+f.exp.ID+"/calls", nil), http.StatusUnauthorized)
}

func TestCallsBadQuery(t *testing.T) {
	f := newIngestFixture(t)
	for query, field := range map[string]string{
		"limit=0":                         "limit",
		"limit=501":                       "limit",
		"limit=ten":                       "limit",
		"error=maybe":                     "error",
		"score_min=0.5":                   "score",
		"score=h&score_min=abc":           "score_min",
		"score=h&score_max=1e999":         "score_max",
		"score=h&score_min=2&score_max=1": "score_min",
		"score=bad%20name":                "score",
		"from=yesterday":                  "from",
		"from=2026-11-20T10:00:00Z&to=2026-11-20T09:00:00Z": "from",
		"cursor=not-a-cursor":                               "cursor",
		"variant=a%00b":                                     "variant",
		"model=" + strings.Repeat("m", 300):                 "model",
	} {
		r := f.env.Do(t, "GET", "/v1/experiments/"+f.exp.ID+"/calls?"+query, nil, testenv.Bearer(f.org.MemberToken)...)
		p := testenv.ExpectProblem(t, r, http.StatusBadRequest)
		if len(p.Errors) == 0 || p.Errors[0].Field != field {
			t.Errorf("%s: errors %+v, want the field %s", query, p.Errors, field)
		}
	}
}
