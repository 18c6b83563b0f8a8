package database_test

import (
	"os"
	"testing"

	"github.com/expd/expd/database"
)

// TestPartitionMigrationKeepsEveryRow fills a database of the schema before
// partitioning (migrations up to 0006) with events over 90 days and a few
// ahead, migrates it, and compares row count and a checksum over every
// column of every row, ordered by key, before and after.
func TestPartitionMigrationKeepsEveryRow(t *testing.T) {
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		t.Skip("the partitioning migration runs on PostgreSQL only; set DATABASE_URL")
	}
	dsn, drop, err := database.NewSchema(base, "t_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drop() })
	db, err := database.Open(dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	if _, err := database.MigrateTo(db, 170); err != nil {
		t.Fatal(err)
	}
	// 20,000 rows of every type, nulls where a type has no field, two
	// orgs sharing event ids, timestamps from 90 days back to 3 days ahead.
	err = db.Exec(`INSERT INTO events (org_id, event_id, type, experiment_id, user_id, variant, ts, received_at, config_version,
  model, latency_ms, input_tokens, output_tokens, total_tokens, cost_usd, time_to_first_token_ms, error, business_metric, value, prompt, response, source)
SELECT (ARRAY['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'])[1 + i % 2]::uuid,
  'ev-' || (i / 2), (ARRAY['exposure', 'model_call', 'business_event'])[1 + i % 3],
  '33333333-3333-4333-8333-333333333333', 'user-' || (i % 997), CASE WHEN i % 5 = 0 THEN 'b' ELSE 'a' END,
  now() - make_interval(secs => (i * 397) % (93 * 86400)) + interval '3 days', now(), i,
  CASE WHEN i % 3 = 1 THEN 'gpt' END, CASE WHEN i % 3 = 1 THEN i * 0.5 END, i % 100, i % 50, i % 150, i * 1e-6, NULL,
  CASE WHEN i % 31 = 0 THEN 'timeout' END, CASE WHEN i % 3 = 2 THEN 'conversion' END, CASE WHEN i % 3 = 2 THEN i END,
  'prompt ' || i, E'response \n' || i, 'api'
FROM generate_series(0, 19999) AS i`).Error
	if err != nil {
		t.Fatal(err)
	}
	type sum struct {
		N        int64
		Checksum string
	}
	checksum := func() sum {
		var s sum
		// The columns of 0170's events, by name: later migrations add
		// columns (0350), which a whole-row text would count as a change.
		if err := db.Raw(`SELECT count(*) AS n, md5(string_agg(ROW(org_id, event_id, type, experiment_id, user_id, variant, ts, received_at,
  config_version, model, latency_ms, input_tokens, output_tokens, total_tokens, cost_usd, time_to_first_token_ms, error,
  business_metric, value, prompt, response, source)::text, '|' ORDER BY org_id, event_id)) AS checksum FROM events e`).Scan(&s).Error; err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := checksum()
	if before.N != 20000 {
		t.Fatalf("filled %d rows", before.N)
	}
	applied, err := database.Migrate(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) == 0 || applied[0] != 171 {
		t.Fatalf("applied %v, want 0171 first", applied)
	}
	if after := checksum(); after != before {
		t.Fatalf("after migration %+v, before %+v", after, before)
	}
	var ids, inDefault, partitioned int64
	db.Raw(`SELECT count(DISTINCT (org_id, event_id)) FROM event_ids`).Scan(&ids)
	db.Raw(`SELECT count(*) FROM events_default`).Scan(&inDefault)
	db.Raw(`SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'events'::regclass`).Scan(&partitioned)
	if ids != before.N || inDefault != 0 || partitioned != 1 {
		t.Fatalf("event_ids %d (want %d), rows in default %d (want 0), partitioned %d", ids, before.N, inDefault, partitioned)
	}
	// Every row's id was claimed at its own timestamp.
	var mismatched int64
	db.Raw(`SELECT count(*) FROM events e JOIN event_ids i USING (org_id, event_id) WHERE i.ts <> e.ts`).Scan(&mismatched)
	if mismatched != 0 {
		t.Fatalf("%d ids with another timestamp than their event", mismatched)
	}
}
