package models_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/models"
)

func TestMigrateIsIdempotentAndChecked(t *testing.T) {
	db, err := models.OpenSQLite(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := models.CheckMigrated(db); !errors.Is(err, models.ErrNotMigrated) {
		t.Fatalf("fresh db: %v, want ErrNotMigrated", err)
	}
	migs, err := models.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	applied, err := models.Migrate(db)
	if err != nil || len(applied) != len(migs) {
		t.Fatalf("first migrate: %v %v", applied, err)
	}
	if err := models.CheckMigrated(db); err != nil {
		t.Fatalf("after migrate: %v", err)
	}
	applied, err = models.Migrate(db)
	if err != nil || len(applied) != 0 {
		t.Fatalf("second migrate applied %v, %v", applied, err)
	}
	// A pending migration is detected.
	if err := db.Exec("DELETE FROM schema_migrations WHERE version = ?", migs[len(migs)-1].Version).Error; err != nil {
		t.Fatal(err)
	}
	if err := models.CheckMigrated(db); !errors.Is(err, models.ErrNotMigrated) {
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
	if !models.IsUniqueViolation(err) {
		t.Fatalf("second live key: %v, want unique violation", err)
	}
}
