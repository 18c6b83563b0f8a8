package database_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/expd/expd/database"
	"github.com/expd/expd/internal/testenv"
)

func TestMigrateIsIdempotentAndChecked(t *testing.T) {
	db, err := database.OpenSQLite(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := database.CheckMigrated(db); !errors.Is(err, database.ErrNotMigrated) {
		t.Fatalf("fresh db: %v, want ErrNotMigrated", err)
	}
	migs, err := database.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	applied, err := database.Migrate(db)
	if err != nil || len(applied) != len(migs) {
		t.Fatalf("first migrate: %v %v", applied, err)
	}
	if err := database.CheckMigrated(db); err != nil {
		t.Fatalf("after migrate: %v", err)
	}
	applied, err = database.Migrate(db)
	if err != nil || len(applied) != 0 {
		t.Fatalf("second migrate applied %v, %v", applied, err)
	}
	// A pending migration is detected.
	if err := db.Exec("DELETE FROM schema_migrations WHERE version = ?", migs[len(migs)-1].Version).Error; err != nil {
		t.Fatal(err)
	}
	if err := database.CheckMigrated(db); !errors.Is(err, database.ErrNotMigrated) {
		t.Fatalf("pending migration not detected: %v", err)
	}
}

func TestSchemaEnforcesOneLiveKeyPerScope(t *testing.T) {
	db := testenv.DB(t)
	exec := func(sql string, args ...any) error { return db.Exec(sql, args...).Error }
	if err := exec("INSERT INTO orgs (id, created_at, updated_at) VALUES ('7b0c7c1e-2f5e-4d2a-9f43-0d6f3f5b9a11', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"); err != nil {
		t.Fatal(err)
	}
	insert := func(id, hash string) error {
		return exec("INSERT INTO api_keys (id, org_id, scope, key_hash, prefix, created_at) VALUES (?, '7b0c7c1e-2f5e-4d2a-9f43-0d6f3f5b9a11', 'secret', ?, 'sk_', CURRENT_TIMESTAMP)", id, hash)
	}
	if err := insert("0c7f0c4e-0000-4000-8000-000000000001", "h1"); err != nil {
		t.Fatal(err)
	}
	err := insert("0c7f0c4e-0000-4000-8000-000000000002", "h2")
	if !database.IsUniqueViolation(err) {
		t.Fatalf("second live key: %v, want unique violation", err)
	}
}

// Two migrators at once on one fresh PostgreSQL schema, each with its own
// connection pool as two `expd migrate` processes would have: both succeed
// and every migration is applied exactly once. The extra last migration
// runs outside a transaction (CREATE INDEX CONCURRENTLY).
func TestConcurrentMigrationsApplyEachOnce(t *testing.T) {
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		t.Skip("needs PostgreSQL (DATABASE_URL): the advisory lock is PostgreSQL's")
	}
	u, drop, err := database.NewSchema(base, "t_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drop() })
	migs, err := database.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	// On assignments: events is partitioned on PostgreSQL (0171), and
	// PostgreSQL builds no index concurrently on a partitioned table.
	concurrent := database.NewMigration(99999, "concurrent_index",
		database.NoTransactionMarker+"\nCREATE INDEX {{concurrently}} IF NOT EXISTS assignments_test_concurrent ON assignments (org_id, created_at);\n")
	if !concurrent.NoTransaction {
		t.Fatal("marker not recognised")
	}
	migs = append(migs, concurrent)

	const runs = 2
	applied := make([][]int, runs)
	errs := make([]error, runs)
	var wg sync.WaitGroup
	for i := range runs {
		db, err := database.Open(u, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if s, err := db.DB(); err == nil {
				_ = s.Close()
			}
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied[i], errs[i] = database.Apply(db, migs)
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for i := range runs {
		if errs[i] != nil {
			t.Fatalf("migrator %d: %v", i, errs[i])
		}
		for _, v := range applied[i] {
			count[v]++
		}
	}
	for _, m := range migs {
		if count[m.Version] != 1 {
			t.Errorf("migration %d applied %d times, want once", m.Version, count[m.Version])
		}
	}
	db, err := database.Open(u, "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	}()
	var rows int64
	if err := db.Raw("SELECT count(*) FROM schema_migrations").Scan(&rows).Error; err != nil || rows != int64(len(migs)) {
		t.Fatalf("schema_migrations has %d rows (%v), want %d", rows, err, len(migs))
	}
	var valid bool
	if err := db.Raw(`SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE c.relname = 'assignments_test_concurrent' AND c.relnamespace = current_schema()::regnamespace`).Scan(&valid).Error; err != nil || !valid {
		t.Fatalf("concurrently built index valid=%v (%v)", valid, err)
	}
}
