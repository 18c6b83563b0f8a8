package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
)

// readEvent is one event of GET /v1/experiments/:id/events.
type readEvent struct {
	EventID            string   `json:"event_id"`
	Type               string   `json:"type"`
	ExperimentID       string   `json:"experiment_id"`
	UserID             string   `json:"user_id"`
	Variant            *string  `json:"variant"`
	Timestamp          string   `json:"timestamp"`
	ReceivedAt         string   `json:"received_at"`
	ConfigVersion      *int64   `json:"config_version"`
	Model              *string  `json:"model"`
	LatencyMs          *float64 `json:"latency_ms"`
	InputTokens        *int64   `json:"input_tokens"`
	OutputTokens       *int64   `json:"output_tokens"`
	TotalTokens        *int64   `json:"total_tokens"`
	CostUSD            *float64 `json:"cost_usd"`
	TimeToFirstTokenMs *float64 `json:"time_to_first_token_ms"`
	Error              *string  `json:"error"`
	BusinessMetric     *string  `json:"business_metric"`
	Value              *float64 `json:"value"`
	Prompt             *string  `json:"prompt"`
	Response           *string  `json:"response"`
	Source             string   `json:"source"`
}

type readPage struct {
	ExperimentID string      `json:"experiment_id"`
	Events       []readEvent `json:"events"`
}

func readEvents(t *testing.T, f ingestFixture, ref string, query url.Values) readPage {
	t.Helper()
	var p readPage
	f.env.Do(t, "GET", "/v1/experiments/"+ref+"/events?"+query.Encode(), nil, testenv.Bearer(f.org.MemberToken)...).ExpectJSON(t, http.StatusOK, &p)
	return p
}

func eventIDs(p readPage) []string {
	ids := make([]string, len(p.Events))
	for i, e := range p.Events {
		ids[i] = e.EventID
	}
	return ids
}

func TestReadEventsShowsEveryStoredFieldNewestFirst(t *testing.T) {
	f := newIngestFixture(t)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	exp := exposure(f.exp.Name, "u1", "control", base)
	call := modelCall(f.exp.ID, "u1", base.Add(time.Second))
	sale := businessEvent(f.exp.ID, "u2", base.Add(2*time.Second))
	accepted(t, postEvents(t, f.env, f.org.PublishableKey, exp, call, sale))

	for _, ref := range []string{f.exp.ID, f.exp.Name} {
		p := readEvents(t, f, ref, nil)
		if p.ExperimentID != f.exp.ID {
			t.Fatalf("experiment_id %q, want %q", p.ExperimentID, f.exp.ID)
		}
		if got, want := eventIDs(p), []string{sale["event_id"].(string), call["event_id"].(string), exp["event_id"].(string)}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("order by %s: %v, want newest first %v", ref, got, want)
		}
	}
	p := readEvents(t, f, f.exp.ID, nil)
	gotSale, gotCall, gotExp := p.Events[0], p.Events[1], p.Events[2]

	if gotCall.Type != "model_call" || gotCall.ExperimentID != f.exp.ID || gotCall.UserID != "u1" || *gotCall.Variant != "control" ||
		gotCall.Timestamp != stamp(base.Add(time.Second)) || *gotCall.Model != "gpt-x" || *gotCall.LatencyMs != 812.5 ||
		*gotCall.InputTokens != 120 || *gotCall.OutputTokens != 30 || *gotCall.TotalTokens != 150 || *gotCall.CostUSD != 0.0021 ||
		*gotCall.TimeToFirstTokenMs != 95 || gotCall.Error != nil || *gotCall.Prompt != "Hi" || *gotCall.Response != "Hello" ||
		gotCall.BusinessMetric != nil || gotCall.Value != nil || gotCall.Source != "api" {
		t.Fatalf("model_call read back: %+v", gotCall)
	}
	received, err := time.Parse(time.RFC3339Nano, gotCall.ReceivedAt)
	if err != nil || received.Before(base) || received.After(time.Now().Add(time.Second)) {
		t.Fatalf("received_at %q: %v", gotCall.ReceivedAt, err)
	}
	if gotSale.Type != "business_event" || *gotSale.BusinessMetric != "revenue" || *gotSale.Value != 9.5 || *gotSale.Variant != "concise" ||
		gotSale.Model != nil || gotSale.LatencyMs != nil || gotSale.Prompt != nil {
		t.Fatalf("business_event read back: %+v", gotSale)
	}
	if gotExp.Type != "exposure" || *gotExp.ConfigVersion != 1 || gotExp.ExperimentID != f.exp.ID || gotExp.Model != nil || gotExp.Value != nil {
		t.Fatalf("exposure (sent by name) read back: %+v", gotExp)
	}
}

func TestReadEventsFiltersByTypeAndUser(t *testing.T) {
	f := newIngestFixture(t)
	at := time.Now().Add(-time.Minute)
	accepted(t, postEvents(t, f.env, f.org.PublishableKey,
		exposure(f.exp.ID, "u1", "control", at), modelCall(f.exp.ID, "u1", at), modelCall(f.exp.ID, "u2", at),
		businessEvent(f.exp.ID, "u2", at)))

	calls := readEvents(t, f, f.exp.ID, url.Values{"type": {"model_call"}})
	if len(calls.Events) != 2 || calls.Events[0].Type != "model_call" || calls.Events[1].Type != "model_call" {
		t.Fatalf("type=model_call: %+v", calls.Events)
	}
	u2 := readEvents(t, f, f.exp.ID, url.Values{"user_id": {"u2"}})
	if len(u2.Events) != 2 || u2.Events[0].UserID != "u2" || u2.Events[1].UserID != "u2" {
		t.Fatalf("user_id=u2: %+v", u2.Events)
	}
	both := readEvents(t, f, f.exp.ID, url.Values{"user_id": {"u1"}, "type": {"exposure"}})
	if len(both.Events) != 1 || both.Events[0].UserID != "u1" || both.Events[0].Type != "exposure" {
		t.Fatalf("user_id=u1&type=exposure: %+v", both.Events)
	}
	if none := readEvents(t, f, f.exp.ID, url.Values{"user_id": {"nobody"}}); len(none.Events) != 0 {
		t.Fatalf("unknown user: %+v", none.Events)
	}
}

func TestReadEventsLimitDefaultsTo100(t *testing.T) {
	f := newIngestFixture(t)
	base := time.Now().Add(-time.Hour)
	const sent = 130
	events := make([]map[string]any, sent)
	for i := range events {
		events[i] = exposure(f.exp.ID, fmt.Sprintf("u%d", i), "control", base.Add(time.Duration(i)*time.Second))
	}
	accepted(t, postEvents(t, f.env, f.org.PublishableKey, events...))

	if p := readEvents(t, f, f.exp.ID, nil); len(p.Events) != 100 || p.Events[0].UserID != fmt.Sprintf("u%d", sent-1) {
		t.Fatalf("default page: %d events, first %+v", len(p.Events), p.Events[0])
	}
	if p := readEvents(t, f, f.exp.ID, url.Values{"limit": {"1000"}}); len(p.Events) != sent {
		t.Fatalf("limit=1000: %d events, want %d", len(p.Events), sent)
	}
	p := readEvents(t, f, f.exp.ID, url.Values{"limit": {"3"}})
	if got := []string{p.Events[0].UserID, p.Events[1].UserID, p.Events[2].UserID}; fmt.Sprint(got) != fmt.Sprint([]string{"u129", "u128", "u127"}) {
		t.Fatalf("limit=3: %v", got)
	}
}

func TestReadEventsRejectsBadParameters(t *testing.T) {
	f := newIngestFixture(t)
	for _, tc := range []struct{ query, field string }{
		{"type=click", "type"},
		{"limit=0", "limit"},
		{"limit=1001", "limit"},
		{"limit=ten", "limit"},
		{"user_id=", "user_id"},
		{"user_id=" + strings.Repeat("x", 257), "user_id"},
	} {
		r := f.env.Do(t, "GET", "/v1/experiments/"+f.exp.ID+"/events?"+tc.query, nil, testenv.Bearer(f.org.AdminToken)...)
		p := testenv.ExpectProblem(t, r, http.StatusBadRequest)
		if len(p.Errors) != 1 || p.Errors[0].Field != tc.field {
			t.Fatalf("%s: errors %+v, want one naming %s", tc.query, p.Errors, tc.field)
		}
	}
}

func TestReadEventsOfUnknownOrOtherOrgsExperimentIs404(t *testing.T) {
	f := newIngestFixture(t)
	accepted(t, postEvents(t, f.env, f.org.PublishableKey, exposure(f.exp.ID, "u1", "control", time.Now())))
	other := f.env.NewOrg(t)
	for _, tc := range []struct{ ref, token string }{
		{f.exp.ID, other.AdminToken},
		{f.exp.Name, other.AdminToken},
		{"00000000-0000-4000-8000-000000000000", f.org.AdminToken},
		{"no-such-experiment", f.org.AdminToken},
	} {
		r := f.env.Do(t, "GET", "/v1/experiments/"+tc.ref+"/events", nil, testenv.Bearer(tc.token)...)
		if p := testenv.ExpectProblem(t, r, http.StatusNotFound); p.Code != "experiment_not_found" {
			t.Fatalf("%s: code %q", tc.ref, p.Code)
		}
	}
}

func TestReadEventsNeedsASessionNotAnAPIKey(t *testing.T) {
	f := newIngestFixture(t)
	for _, headers := range [][]string{nil, testenv.APIKey(f.org.SecretKey)} {
		r := f.env.Do(t, "GET", "/v1/experiments/"+f.exp.ID+"/events", nil, headers...)
		testenv.ExpectProblem(t, r, http.StatusUnauthorized)
	}
}
