package api_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/audit"
	"github.com/expd/expd/database"
	"github.com/expd/expd/erasure"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/vocab"
	expdworker "github.com/expd/expd/worker"
	"github.com/expd/expd/workflows"
)

// erasedUser is a user id distinctive enough that a scan for it finds
// only it.
const erasedUser = "erase-me+7f3a9c@example.com"

type erasureBody struct {
	ID          string           `json:"id"`
	State       string           `json:"state"`
	UserHash    string           `json:"user_hash"`
	Removed     map[string]int64 `json:"removed"`
	CompletedAt *time.Time       `json:"completed_at"`
}

func serverKey(t *testing.T) *secrets.Keyring {
	t.Helper()
	k, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	ring, err := secrets.Parse(k, "")
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

// erasureWorld is an org's data around erasedUser: two experiments
// started four days ago, three days of traffic of 10 users per arm (one
// of them erasedUser) written through the group-commit writer (events and
// pins), judge scores of every model call, and the days rolled up by an
// incremental run.
type erasureWorld struct {
	org  testenv.Org
	exps []string
	key  results.Key
}

func seedErasureWorld(t *testing.T, env *testenv.Env, ring *secrets.Keyring, now time.Time) erasureWorld {
	t.Helper()
	org := env.NewOrg(t)
	w := erasureWorld{org: org, key: results.NightlyKey(now.AddDate(0, 0, -1))}
	writer := ingest.NewWriter(env.DB, ingest.Options{Secrets: ring, Now: func() time.Time { return now }})
	tenant := ingest.Tenant{OrgID: org.ID, Plan: plans.Enterprise}
	users := resultstest.Users(10, 34)
	users[0].ID = erasedUser
	// A code evaluator of the org, whose evaluations of the user's calls
	// quote them.
	evaluator := uuid.NewString()
	if err := env.DB.Exec(`INSERT INTO evaluators (id, org_id, name, kind, score, spec, version, created_at, updated_at) VALUES (?, ?, 'len', 'code', 'helpfulness', '{}', 1, ?, ?)`,
		evaluator, org.ID, now, now).Error; err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config(fmt.Sprintf("erasure-%d", i)))
		resultstest.Backdate(t, env.DB, exp.ID, 4*24*time.Hour)
		w.exps = append(w.exps, exp.ID)
		for d := 3; d >= 1; d-- {
			day := now.AddDate(0, 0, -d).Truncate(24 * time.Hour).Add(9 * time.Hour)
			rows := resultstest.Events(org.ID, exp.ID, users, day)
			for k := range rows {
				rows[k].EventID = fmt.Sprintf("d%d-%s", d, rows[k].EventID)
			}
			var sc []scores.Row
			for _, r := range rows {
				if r.Type == vocab.TypeModelCall {
					sc = append(sc, scores.Row{OrgID: org.ID, CallID: r.EventID, Name: "helpfulness", Source: "judge", Value: 0.7, Ts: r.Ts})
					if err := env.DB.Exec(`INSERT INTO evaluations (evaluator_id, call_id, org_id, evaluator_version, status, score, reason, day, evaluated_at) VALUES (?, ?, ?, 1, 'scored', 0.7, ?, ?, ?)`,
						evaluator, r.EventID, org.ID, "quotes the call of "+r.UserID, r.Ts.Format(time.DateOnly), now).Error; err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := writer.Write(t.Context(), ingest.Batch{Tenant: tenant, Rows: rows, Scores: sc}); err != nil {
				t.Fatal(err)
			}
		}
		if database.IsPostgres(env.DB) {
			if err := env.DB.Exec("ANALYZE").Error; err != nil {
				t.Fatal(err)
			}
		}
		sample := aggregateRun(t, env.DB, org.ID, exp.ID, w.key, now)
		if !hasUser(sample, erasedUser) {
			t.Fatalf("before the erasure the run of %s has no %s", exp.ID, erasedUser)
		}
	}
	return w
}

// aggregateRun reads the run of key the way a run does (rollups of the
// ended days, rolling up what is missing) and returns its sample.
func aggregateRun(t *testing.T, db *gorm.DB, orgID, expID string, key results.Key, now time.Time) results.Sample {
	t.Helper()
	p, err := results.LoadDesign(t.Context(), db, orgID, expID, key.WindowEnd)
	if err != nil || p.Skip != "" {
		t.Fatalf("design of %s: %v %s", key.ComputedFor, err, p.Skip)
	}
	d := p.Design
	s, _, err := results.AggregateIncremental(t.Context(), db, orgID, expID, d.Window, d.Arms(), d.Metrics, now, nil)
	if err != nil {
		t.Fatalf("run %s: %v", key.ComputedFor, err)
	}
	return s
}

func hasUser(s results.Sample, user string) bool {
	for _, arm := range s.Arms {
		for _, u := range arm.UserIDs {
			if u == user {
				return true
			}
		}
	}
	return false
}

// userRows counts the rows naming user of the org in every table: each
// table with a user_id column, and the scores and evaluations of the
// user's model calls (calls, read before any erasure).
func userRows(t *testing.T, db *gorm.DB, orgID, user string, calls []string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, table := range tablesWithColumn(t, db, "user_id") {
		var n int64
		q := `SELECT count(*) FROM ` + table + ` WHERE CAST(user_id AS TEXT) = ?`
		args := []any{user}
		if hasColumn(t, db, table, "org_id") {
			q, args = q+` AND CAST(org_id AS TEXT) = ?`, append(args, orgID)
		}
		if err := db.Raw(q, args...).Scan(&n).Error; err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	for _, table := range []string{"scores", "evaluations"} {
		var n int64
		if len(calls) > 0 {
			if err := db.Raw(`SELECT count(*) FROM `+table+` WHERE CAST(org_id AS TEXT) = ? AND call_id IN ?`, orgID, calls).Scan(&n).Error; err != nil {
				t.Fatalf("count %s: %v", table, err)
			}
		}
		out[table] = n
	}
	return out
}

// tablesWithColumn lists the tables (not partitions) having column.
func tablesWithColumn(t *testing.T, db *gorm.DB, column string) []string {
	t.Helper()
	var names []string
	var err error
	if database.IsPostgres(db) {
		err = db.Raw(`SELECT c.relname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE a.attname = ? AND n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`, column).Scan(&names).Error
	} else {
		err = db.Raw(`SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name = ? ORDER BY 1`, column).Scan(&names).Error
	}
	if err != nil || len(names) == 0 {
		t.Fatalf("tables with %s: %v %v", column, names, err)
	}
	return names
}

func hasColumn(t *testing.T, db *gorm.DB, table, column string) bool {
	t.Helper()
	cols, err := db.Migrator().ColumnTypes(table)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		if c.Name() == column {
			return true
		}
	}
	return false
}

func userCalls(t *testing.T, db *gorm.DB, orgID, user string) []string {
	t.Helper()
	var calls []string
	if err := db.Raw(`SELECT event_id FROM events WHERE org_id = ? AND user_id = ? AND type = ?`, orgID, user, vocab.TypeModelCall).Scan(&calls).Error; err != nil {
		t.Fatal(err)
	}
	return calls
}

func waitErasure(t *testing.T, env *testenv.Env, auth []string, id string) erasureBody {
	t.Helper()
	var got erasureBody
	waitUntil(t, "erasure "+id+" completed", func() bool {
		env.Do(t, http.MethodGet, "/v1/erasures/"+id, nil, auth...).ExpectJSON(t, http.StatusOK, &got)
		return got.State == erasure.StateCompleted
	})
	return got
}

// syncBuffer is a log sink the server and the worker write concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestErasureEndToEnd: a user with events, judge scores, pins and rollups
// over three days in two experiments is erased through POST /v1/erasures
// and the real workflow on the in-process Temporal server. Every table
// holds none of the user's rows afterwards, the counts per table are what
// was there, the same user id in another org is untouched, the next run
// excludes the user, the user's events replayed later are dropped, and
// neither the workflow history, the audit log nor the logs hold the id.
func TestErasureEndToEnd(t *testing.T) {
	ring := serverKey(t)
	logs := &syncBuffer{}
	env, tenv := testenv.NewWithWorker(t, func(a *activities.Activities) { a.Secrets = ring }, func(d *api.Deps) {
		d.Secrets = ring
		d.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	now := time.Now().UTC()
	a := seedErasureWorld(t, env, ring, now)
	b := seedErasureWorld(t, env, ring, now)
	callsA, callsB := userCalls(t, env.DB, a.org.ID, erasedUser), userCalls(t, env.DB, b.org.ID, erasedUser)
	beforeA, beforeB := userRows(t, env.DB, a.org.ID, erasedUser, callsA), userRows(t, env.DB, b.org.ID, erasedUser, callsB)
	for _, table := range []string{"events", "assignments", "result_rollups", "scores", "evaluations"} {
		if beforeA[table] == 0 || beforeB[table] != beforeA[table] {
			t.Fatalf("seed: %s rows of the user: org A %d, org B %d", table, beforeA[table], beforeB[table])
		}
	}
	t.Logf("rows of the user before: %v", beforeA)

	admin := testenv.Bearer(a.org.AdminToken)
	var started erasureBody
	env.Do(t, http.MethodPost, "/v1/erasures", map[string]string{"user_id": erasedUser}, admin...).ExpectJSON(t, http.StatusAccepted, &started)
	if started.ID == "" || started.State != erasure.StateRunning || started.UserHash == "" || strings.Contains(started.UserHash, erasedUser) {
		t.Fatalf("POST /v1/erasures: %+v", started)
	}
	done := waitErasure(t, env, admin, started.ID)

	afterA, afterB := userRows(t, env.DB, a.org.ID, erasedUser, callsA), userRows(t, env.DB, b.org.ID, erasedUser, callsB)
	for table, n := range afterA {
		if n != 0 {
			t.Errorf("after the erasure org A's %s holds %d rows of the user", table, n)
		}
	}
	for table, n := range beforeB {
		if afterB[table] != n {
			t.Errorf("org B's %s: %d rows of the same user id before, %d after (another org's user must be untouched)", table, n, afterB[table])
		}
	}
	for _, table := range erasure.Tables {
		if done.Removed[table] != beforeA[table] {
			t.Errorf("removed[%s] = %d, want the %d rows there were", table, done.Removed[table], beforeA[table])
		}
	}
	if done.CompletedAt == nil {
		t.Error("completed erasure without completed_at")
	}

	// The next run of each experiment excludes the user.
	for _, exp := range a.exps {
		if s := aggregateRun(t, env.DB, a.org.ID, exp, a.key, now); hasUser(s, erasedUser) {
			t.Errorf("the run of %s after the erasure still has the user", exp)
		}
	}
	for _, exp := range b.exps {
		if s := aggregateRun(t, env.DB, b.org.ID, exp, b.key, now); !hasUser(s, erasedUser) {
			t.Errorf("the run of org B's %s lost the user of the same id", exp)
		}
	}

	// A client's spill file replays the user's events later: dropped,
	// answered as duplicates.
	late := resultstest.Events(a.org.ID, a.exps[0], []resultstest.User{{ID: erasedUser, Variant: "control", Latencies: []float64{1}}}, now.Add(-time.Hour))
	for k := range late {
		late[k].EventID = "late-" + late[k].EventID
	}
	var ack struct{ Accepted, Duplicates int }
	env.Do(t, http.MethodPost, "/v1/events", map[string]any{"events": []map[string]any{resultstest.Wire(late[0]), resultstest.Wire(late[1])}},
		testenv.APIKey(a.org.SecretKey)...).ExpectJSON(t, http.StatusAccepted, &ack)
	if ack.Accepted != 0 || ack.Duplicates != 2 {
		t.Errorf("late events of the erased user: %+v, want 0 accepted and 2 duplicates", ack)
	}
	if n := userRows(t, env.DB, a.org.ID, erasedUser, nil)["events"]; n != 0 {
		t.Errorf("late events of the erased user stored: %d", n)
	}

	// The audit log names the user by hash only.
	resp := env.Do(t, http.MethodGet, "/v1/audit", nil, admin...)
	if resp.Status != http.StatusOK || !strings.Contains(string(resp.Body), audit.ErasureCompleted) ||
		!strings.Contains(string(resp.Body), audit.ErasureRequested) || !strings.Contains(string(resp.Body), done.UserHash) {
		t.Errorf("audit log: %d %s", resp.Status, resp.Body)
	}
	// Nothing kept the user id: the audit log, the erasures table, the
	// workflow's history, the logs.
	var leaks int64
	if err := env.DB.Raw(`SELECT count(*) FROM audit_log WHERE summary LIKE ? OR CAST(after_state AS TEXT) LIKE ?`, "%"+erasedUser+"%", "%"+erasedUser+"%").Scan(&leaks).Error; err != nil || leaks != 0 {
		t.Errorf("audit rows naming the user id: %d %v", leaks, err)
	}
	var sealed string
	if err := env.DB.Raw(`SELECT user_id_sealed FROM erasures WHERE id = ?`, done.ID).Scan(&sealed).Error; err != nil || sealed != "" {
		t.Errorf("the completed erasure keeps its sealed user id %q (%v)", sealed, err)
	}
	history := string(workflowHistory(t, tenv, workflows.ErasureWorkflowID(a.org.ID, done.UserHash)))
	if !strings.Contains(history, "EraseTable") || strings.Contains(history, erasedUser) {
		t.Errorf("the workflow history names the user id (or ran no step): %d bytes", len(history))
	}
	if strings.Contains(logs.String(), erasedUser) {
		t.Errorf("the logs name the user id")
	}

	// Erasing again: a new erasure, nothing left to remove.
	var again erasureBody
	env.Do(t, http.MethodPost, "/v1/erasures", map[string]string{"user_id": erasedUser}, testenv.APIKey(a.org.SecretKey)...).ExpectJSON(t, http.StatusAccepted, &again)
	if again.ID == done.ID || again.UserHash != done.UserHash {
		t.Errorf("second erasure %+v after %+v", again, done)
	}
	if got := waitErasure(t, env, admin, again.ID); sum(got.Removed) != 0 {
		t.Errorf("second erasure removed %v", got.Removed)
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// TestErasureOfAnUnknownUserCompletesWithZeroRows: not an error.
func TestErasureOfAnUnknownUserCompletesWithZeroRows(t *testing.T) {
	ring := serverKey(t)
	env, _ := testenv.NewWithWorker(t, func(a *activities.Activities) { a.Secrets = ring }, func(d *api.Deps) { d.Secrets = ring })
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	var started erasureBody
	env.Do(t, http.MethodPost, "/v1/erasures", map[string]string{"user_id": "never-seen"}, admin...).ExpectJSON(t, http.StatusAccepted, &started)
	got := waitErasure(t, env, admin, started.ID)
	if sum(got.Removed) != 0 || len(got.Removed) != len(erasure.Tables) {
		t.Errorf("unknown user's erasure: %+v", got)
	}
}

// blockingEvents is the events store of a worker that dies in the events
// step: DeleteUser says it started and waits until the worker stops.
type blockingEvents struct {
	ingest.EventStore
	entered chan struct{}
	once    sync.Once
}

func (b *blockingEvents) DeleteUser(ctx context.Context, orgID, userID string) (int64, error) {
	b.once.Do(func() { close(b.entered) })
	<-ctx.Done()
	return 0, ctx.Err()
}

// TestErasureSurvivesAWorkerRestart: the worker running an erasure stops
// in the middle (its events step never finishes); a new worker resumes
// the workflow, which completes once with every row counted once.
func TestErasureSurvivesAWorkerRestart(t *testing.T) {
	ring := serverKey(t)
	tenv := temporaltest.Start(t)
	env := testenv.New(t, func(d *api.Deps) { d.Temporal, d.TaskQueue, d.Secrets = tenv.Client, tenv.TaskQueue, ring })
	now := time.Now().UTC()
	w := seedErasureWorld(t, env, ring, now)
	before := userRows(t, env.DB, w.org.ID, erasedUser, userCalls(t, env.DB, w.org.ID, erasedUser))

	stuck := &blockingEvents{EventStore: ingest.SQLEvents{DB: env.DB}, entered: make(chan struct{})}
	first := worker.New(tenv.Client, tenv.TaskQueue, worker.Options{WorkflowPanicPolicy: worker.FailWorkflow})
	expdworker.Register(first, &activities.Activities{DB: env.DB, Secrets: ring, Events: stuck})
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	admin := testenv.Bearer(w.org.AdminToken)
	var started erasureBody
	env.Do(t, http.MethodPost, "/v1/erasures", map[string]string{"user_id": erasedUser}, admin...).ExpectJSON(t, http.StatusAccepted, &started)
	select {
	case <-stuck.entered:
	case <-time.After(2 * time.Minute):
		t.Fatal("the first worker never reached the events step")
	}
	first.Stop()
	var mid erasureBody
	env.Do(t, http.MethodGet, "/v1/erasures/"+started.ID, nil, admin...).ExpectJSON(t, http.StatusOK, &mid)
	if mid.State != erasure.StateRunning || mid.Removed["scores"] != before["scores"] || mid.Removed["events"] != 0 {
		t.Fatalf("after the first worker stopped: %+v", mid)
	}

	tenv.NewWorker(func(r worker.Registry) { expdworker.Register(r, &activities.Activities{DB: env.DB, Secrets: ring}) })
	done := waitErasure(t, env, admin, started.ID)
	for _, table := range erasure.Tables {
		if done.Removed[table] != before[table] {
			t.Errorf("removed[%s] = %d, want %d", table, done.Removed[table], before[table])
		}
	}
	var completions int64
	if err := env.DB.Raw(`SELECT count(*) FROM audit_log WHERE org_id = ? AND action = ?`, w.org.ID, audit.ErasureCompleted).Scan(&completions).Error; err != nil || completions != 1 {
		t.Errorf("%d erasure.completed entries (%v), want 1", completions, err)
	}
	if n := userRows(t, env.DB, w.org.ID, erasedUser, nil)["events"]; n != 0 {
		t.Errorf("%d events left", n)
	}
}

// TestErasureBadInput: every refusal is a problem and writes nothing.
func TestErasureBadInput(t *testing.T) {
	ring := serverKey(t)
	env := testenv.New(t, func(d *api.Deps) { d.Secrets = ring })
	org, other := env.NewOrg(t), env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	for _, c := range []struct {
		name    string
		body    any
		headers []string
		status  int
		code    string
	}{
		{"malformed JSON", `{"user_id":`, admin, http.StatusBadRequest, "malformed_json"},
		{"wrong type", map[string]any{"user_id": 42}, admin, http.StatusBadRequest, ""},
		{"missing user_id", map[string]any{}, admin, http.StatusBadRequest, "validation_failed"},
		{"empty user_id", map[string]any{"user_id": ""}, admin, http.StatusBadRequest, "validation_failed"},
		{"NUL byte", map[string]any{"user_id": "a\x00b"}, admin, http.StatusBadRequest, "validation_failed"},
		{"huge id", map[string]any{"user_id": strings.Repeat("x", ingest.MaxUserIDLen+1)}, admin, http.StatusBadRequest, "validation_failed"},
		{"huge number", `{"user_id": 1e999}`, admin, http.StatusBadRequest, ""},
		{"two objects", `{"user_id":"a"}{"user_id":"b"}`, admin, http.StatusBadRequest, "malformed_json"},
		{"oversized body", map[string]any{"user_id": strings.Repeat("x", 2<<20)}, admin, http.StatusRequestEntityTooLarge, "body_too_large"},
		{"no credentials", map[string]any{"user_id": "u"}, nil, http.StatusUnauthorized, "unauthorized"},
		{"member", map[string]any{"user_id": "u"}, testenv.Bearer(org.MemberToken), http.StatusForbidden, "admin_required"},
		{"publishable key", map[string]any{"user_id": "u"}, testenv.APIKey(org.PublishableKey), http.StatusUnauthorized, "unauthorized"},
		{"bad key", map[string]any{"user_id": "u"}, testenv.APIKey("sk_live_nope"), http.StatusUnauthorized, "unauthorized"},
		{"bad token", map[string]any{"user_id": "u"}, testenv.Bearer("nope"), http.StatusUnauthorized, "unauthorized"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/erasures", c.body, c.headers...), c.status)
			if c.code != "" && p.Code != c.code {
				t.Errorf("code %q, want %q (%s)", p.Code, c.code, p.Detail)
			}
		})
	}
	var n int64
	if err := env.DB.Raw(`SELECT count(*) FROM erasures`).Scan(&n).Error; err != nil || n != 0 {
		t.Fatalf("%d erasures written by refused requests (%v)", n, err)
	}

	// Without Temporal the erasure is recorded, answered 503, and the
	// same request later joins it.
	p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/erasures", map[string]string{"user_id": "u1"}, admin...), http.StatusServiceUnavailable)
	if p.Code != "workflows_unavailable" {
		t.Errorf("without Temporal: %+v", p)
	}
	var row erasure.Row
	if err := env.DB.Take(&row).Error; err != nil {
		t.Fatal(err)
	}
	// Another org's erasure, an unknown id and a non-UUID are not found.
	for _, id := range []string{row.ID, "00000000-0000-0000-0000-000000000000", "not-a-uuid", strings.Repeat("9", 300)} {
		p := testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/erasures/"+id, nil, testenv.Bearer(other.AdminToken)...), http.StatusNotFound)
		if p.Code != "erasure_not_found" {
			t.Errorf("GET %s from another org: %+v", id, p)
		}
	}
	var own erasureBody
	env.Do(t, http.MethodGet, "/v1/erasures/"+row.ID, nil, testenv.APIKey(org.SecretKey)...).ExpectJSON(t, http.StatusOK, &own)
	if own.State != erasure.StateRunning || own.UserHash != row.UserHash {
		t.Errorf("GET own erasure: %+v", own)
	}

	// Without a server key nothing can be erased.
	bare := testenv.New(t, func(d *api.Deps) { d.Secrets = &secrets.Keyring{} })
	borg := bare.NewOrg(t)
	if p := testenv.ExpectProblem(t, bare.Do(t, http.MethodPost, "/v1/erasures", map[string]string{"user_id": "u"}, testenv.Bearer(borg.AdminToken)...), http.StatusConflict); p.Code != "secrets_not_configured" {
		t.Errorf("without EXPD_SECRETS_KEY: %+v", p)
	}
}
