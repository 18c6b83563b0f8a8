package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// POST /v1/exports streams one user's events (across pages and
// experiments), the scores of their calls and their pins as typed NDJSON
// lines; another org's same user id, and an unknown user, export nothing.
func TestExportStreamsOneUsersData(t *testing.T) {
	env := testenv.New(t)
	org, other := env.NewOrg(t), env.NewOrg(t)
	now := time.Now().UTC()
	users := resultstest.Users(3, 9)
	users[0].ID = "export-me"
	writer := ingest.NewWriter(env.DB, ingest.Options{})
	var wantEvents, wantScores int
	for _, o := range []testenv.Org{org, other} {
		exp := resultstest.Experiment(t, env.DB, o.ID, resultstest.Config("export"))
		// Enough events that the user's span more than one page.
		var all []ingest.EventRow
		var sc []scores.Row
		for d := range 400 {
			rows := resultstest.Events(o.ID, exp.ID, users[:1], now.Add(-time.Duration(d+1)*time.Minute))
			for k := range rows {
				rows[k].EventID += "-" + string(rune('a'+d%26)) + strings.Repeat("x", d/26)
				if rows[k].Type == vocab.TypeModelCall && d%2 == 0 {
					sc = append(sc, scores.Row{OrgID: o.ID, CallID: rows[k].EventID, Name: "helpfulness", Source: "judge", Value: 1, Ts: now})
				}
			}
			all = append(all, rows...)
		}
		if o.ID == org.ID {
			wantEvents, wantScores = len(all), len(sc)
		}
		if _, err := writer.Write(t.Context(), ingest.Batch{Tenant: ingest.Tenant{OrgID: o.ID, Plan: plans.Enterprise}, Rows: all, Scores: sc}); err != nil {
			t.Fatal(err)
		}
	}
	resp := env.Do(t, http.MethodPost, "/v1/exports", map[string]string{"user_id": "export-me"}, testenv.Bearer(org.AdminToken)...)
	if resp.Status != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("export: %d %s %.300s", resp.Status, resp.Header.Get("Content-Type"), resp.Body)
	}
	counts := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(resp.Body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lastTs string
	for sc.Scan() {
		var line struct {
			Type  string `json:"type"`
			Event *struct {
				UserID    string `json:"user_id"`
				Timestamp string `json:"timestamp"`
			} `json:"event"`
			Score *struct {
				CallID string `json:"call_id"`
			} `json:"score"`
			Assignment *struct {
				Variant string `json:"variant"`
			} `json:"assignment"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		counts[line.Type]++
		switch line.Type {
		case "event":
			if line.Event == nil || line.Event.UserID != "export-me" || line.Event.Timestamp < lastTs {
				t.Fatalf("event line %s (after %s)", sc.Text(), lastTs)
			}
			lastTs = line.Event.Timestamp
		case "score":
			if line.Score == nil || line.Score.CallID == "" {
				t.Fatalf("score line %s", sc.Text())
			}
		case "assignment":
			if line.Assignment == nil || line.Assignment.Variant == "" {
				t.Fatalf("assignment line %s", sc.Text())
			}
		default:
			t.Fatalf("untyped line %s", sc.Text())
		}
	}
	if counts["event"] != wantEvents || counts["score"] != wantScores || counts["assignment"] != 1 || wantEvents <= 1000 {
		t.Fatalf("exported %v, want %d events, %d scores, 1 assignment", counts, wantEvents, wantScores)
	}

	empty := env.Do(t, http.MethodPost, "/v1/exports", map[string]string{"user_id": "nobody"}, testenv.Bearer(org.AdminToken)...)
	if empty.Status != http.StatusOK || len(empty.Body) != 0 {
		t.Fatalf("unknown user's export: %d %q", empty.Status, empty.Body)
	}
	for _, c := range []struct {
		name    string
		body    any
		headers []string
		status  int
	}{
		{"malformed", `{"user_id"`, testenv.Bearer(org.AdminToken), http.StatusBadRequest},
		{"NUL", map[string]string{"user_id": "a\x00"}, testenv.Bearer(org.AdminToken), http.StatusBadRequest},
		{"huge", map[string]string{"user_id": strings.Repeat("u", 5000)}, testenv.Bearer(org.AdminToken), http.StatusBadRequest},
		{"missing", map[string]string{}, testenv.Bearer(org.AdminToken), http.StatusBadRequest},
		{"member", map[string]string{"user_id": "export-me"}, testenv.Bearer(org.MemberToken), http.StatusForbidden},
		{"secret key", map[string]string{"user_id": "export-me"}, testenv.APIKey(org.SecretKey), http.StatusUnauthorized},
		{"none", map[string]string{"user_id": "export-me"}, nil, http.StatusUnauthorized},
	} {
		testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/exports", c.body, c.headers...), c.status)
	}
}
