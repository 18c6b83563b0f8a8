package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"github.com/expd/expd/api"
	"github.com/expd/expd/database"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/otlp"
)

// What a user pasted into a prompt: an email, an API key and a card.
const (
	plantedEmail  = "planted.person@example.com"
	plantedSecret = "sk-plantedSecret0123456789ABCDEFGH"
	plantedCard   = "4111 1111 1111 1111"
)

var plantedText = fmt.Sprintf("Hi, I am %s, my key is %s and my card %s.", plantedEmail, plantedSecret, plantedCard)

// needles are what must not be found: parts of each planted value, so a
// partly kept one is found too.
var needles = []string{"planted.person", "plantedSecret", "4111 1111"}

// With each payload policy, texts with planted personal data and a secret
// arrive through every ingest path that carries text (POST /v1/events,
// NDJSON import, OTLP traces, and score comments through POST
// /v1/scores); then every column of every table of the database (cast to
// text) and every log line are searched. Under store the planted values
// are found (the search works); under redact, hash and drop they are
// nowhere. Run on SQLite, and on PostgreSQL with DATABASE_URL.
func TestPayloadPolicyLeavesNothingBehind(t *testing.T) {
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prev := slog.Default()
	slog.SetDefault(logger)
	t.Cleanup(func() { slog.SetDefault(prev) })

	for _, policy := range []string{"store", "redact", "hash", "drop"} {
		t.Run(policy, func(t *testing.T) {
			env := newSDKEnv(t, withSecrets(t), func(d *api.Deps) {
				d.Logger = logger
				d.Logging = api.RequestLogging{SampleHot: 1}
			})
			org := env.NewOrg(t)
			putPrivacy(t, env, org, map[string]any{"payload_policy": policy})
			exp := create(t, env, org, validConfig("exp"))
			ingestPlanted(t, env, org, exp.ID)

			found := scanDatabase(t, env.DB, needles)
			inLogs := scanText(logs.String(), needles)
			if policy == "store" {
				// Each path stored the text as sent: the scan sees it.
				for _, n := range needles {
					if len(found[n]) == 0 {
						t.Errorf("store: %q found nowhere: the scan is blind", n)
					}
				}
			} else {
				for n, where := range found {
					t.Errorf("%s: %q stored in %s", policy, n, strings.Join(where, ", "))
				}
			}
			for _, n := range inLogs {
				t.Errorf("%s: %q in the logs", policy, n)
			}
			checkStoredTexts(t, env.DB, org.ID, policy)
		})
	}
}

// ingestPlanted sends the planted text through every path that stores
// text: 4 model calls and one scored comment.
func ingestPlanted(t *testing.T, env *testenv.Env, org testenv.Org, expID string) {
	t.Helper()
	at := time.Now().Add(-time.Minute)
	call := modelCall(expID, "u1", at)
	call["prompt"], call["response"], call["error"] = plantedText, "Sure, "+plantedText, "provider said: "+plantedText
	var ack ackBody
	postEvents(t, env, org.SecretKey, call).ExpectJSON(t, http.StatusAccepted, &ack)
	if ack.Accepted != 1 {
		t.Fatalf("events: %+v", ack)
	}

	line := modelCall(expID, "u2", at.Add(-time.Hour))
	line["prompt"], line["response"] = plantedText, plantedText
	raw, err := json.Marshal(line)
	if err != nil {
		t.Fatal(err)
	}
	var imported struct{ Accepted int }
	env.Do(t, http.MethodPost, "/v1/events/import", string(raw)+"\n", append(testenv.APIKey(org.SecretKey), "Content-Type", "application/x-ndjson")...).
		ExpectJSON(t, http.StatusAccepted, &imported)
	if imported.Accepted != 1 {
		t.Fatalf("import: %+v", imported)
	}

	if err := exporter(t, env, org.PublishableKey).ExportSpans(t.Context(), plantedSpans(t.Context(), expID, at)); err != nil {
		t.Fatalf("traces: %v", err)
	}

	score := map[string]any{"call_id": call["event_id"], "name": "helpful", "value": 1, "source": "human", "comment": "the user wrote " + plantedText}
	r := env.Do(t, http.MethodPost, "/v1/scores", map[string]any{"scores": []any{score}}, testenv.APIKey(org.SecretKey)...)
	if r.Status != http.StatusAccepted {
		t.Fatalf("scores: %d %s", r.Status, r.Body)
	}
}

// plantedSpans is one GenAI span whose prompt and completion carry the
// planted text, as an OpenTelemetry instrumentation records them.
func plantedSpans(ctx context.Context, expID string, at time.Time) []sdktrace.ReadOnlySpan {
	rec := tracetest.NewSpanRecorder()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("privacy-test")
	_, s := tr.Start(ctx, "chat", trace.WithTimestamp(at), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "gpt-4o"),
		attribute.String(otlp.AttrExperiment, expID), attribute.String(otlp.AttrVariant, "control"), attribute.String(otlp.AttrUser, "u3")))
	s.AddEvent("gen_ai.content.prompt", trace.WithAttributes(attribute.String("gen_ai.prompt", plantedText)))
	s.AddEvent("gen_ai.content.completion", trace.WithAttributes(attribute.String("gen_ai.completion", plantedText)))
	s.End(trace.WithTimestamp(at.Add(time.Second)))
	return rec.Ended()
}

// checkStoredTexts: what each policy stored in place of the texts.
func checkStoredTexts(t *testing.T, db *gorm.DB, orgID, policy string) {
	t.Helper()
	var rows []struct {
		Prompt, Response, Error *string
	}
	if err := db.Raw("SELECT prompt, response, error FROM events WHERE org_id = ? AND type = 'model_call'", orgID).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d model calls stored, want 3 (events, import, traces)", len(rows))
	}
	for _, r := range rows {
		if r.Prompt == nil {
			if policy != "drop" {
				t.Errorf("%s: prompt not stored", policy)
			}
			continue
		}
		p := *r.Prompt
		switch policy {
		case "redact":
			if !strings.Contains(p, "[EMAIL]") || !strings.Contains(p, "[SECRET]") || !strings.Contains(p, "[CARD]") || !strings.HasPrefix(p, "Hi, I am ") {
				t.Errorf("redact stored %q", p)
			}
		case "hash":
			if !strings.HasPrefix(p, "hmac-sha256:") || len(p) != len("hmac-sha256:")+64 {
				t.Errorf("hash stored %q", p)
			}
		case "drop":
			t.Errorf("drop stored %q", p)
		}
		if r.Error != nil && policy != "store" && !strings.Contains(*r.Error, "[SECRET]") {
			t.Errorf("%s: error stored as %q, want it redacted", policy, *r.Error)
		}
	}
	if policy == "hash" {
		// Identical texts group: the three calls' prompts hash alike.
		if rows[0].Prompt == nil || rows[1].Prompt == nil || *rows[0].Prompt != *rows[1].Prompt {
			t.Errorf("identical prompts hashed differently: %v %v", rows[0].Prompt, rows[1].Prompt)
		}
	}
}

// scanDatabase searches every column of every table (cast to text) for
// each needle: which table.column holds it.
func scanDatabase(t *testing.T, db *gorm.DB, needles []string) map[string][]string {
	t.Helper()
	type col struct{ Table, Column string }
	var cols []col
	if database.IsPostgres(db) {
		err := db.Raw(`SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns
			WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`).Scan(&cols).Error
		if err != nil {
			t.Fatal(err)
		}
	} else {
		var tables []string
		if err := db.Raw(`SELECT name FROM sqlite_master WHERE type = 'table'`).Scan(&tables).Error; err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			var info []struct{ Name string }
			if err := db.Raw(`SELECT name FROM pragma_table_info(?)`, tb).Scan(&info).Error; err != nil {
				t.Fatal(err)
			}
			for _, c := range info {
				cols = append(cols, col{tb, c.Name})
			}
		}
	}
	if len(cols) < 50 {
		t.Fatalf("found %d columns: the scan would miss tables", len(cols))
	}
	found := map[string][]string{}
	for _, c := range cols {
		for _, n := range needles {
			var hits int64
			q := fmt.Sprintf(`SELECT COUNT(*) FROM %q WHERE CAST(%q AS TEXT) LIKE ?`, c.Table, c.Column)
			if err := db.Raw(q, "%"+n+"%").Scan(&hits).Error; err != nil {
				t.Fatalf("scan %s.%s: %v", c.Table, c.Column, err)
			}
			if hits > 0 {
				found[n] = append(found[n], c.Table+"."+c.Column)
			}
		}
	}
	return found
}

func scanText(s string, needles []string) []string {
	var out []string
	for _, n := range needles {
		if strings.Contains(s, n) {
			out = append(out, n)
		}
	}
	return out
}
