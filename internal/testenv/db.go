// Package testenv is the shared test harness: a fresh database per call
// (its own PostgreSQL schema when DATABASE_URL is set, else a SQLite file),
// migrated; orgs with keys and session tokens; and the real router.
package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"gorm.io/gorm"

	"github.com/expd/expd/database"
)

// DB returns a migrated database that no other test or test run sees.
// With DATABASE_URL (postgres://...) it creates schema t_<random>, points
// the connection's search_path at it and drops it at cleanup.
func DB(t testing.TB) *gorm.DB {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	var db *gorm.DB
	if base == "" {
		var err error
		db, err = database.OpenSQLite(filepath.Join(t.TempDir(), "expd.db"))
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
	} else {
		db = postgresSchema(t, base)
	}
	if _, err := database.Migrate(db); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	return db
}

func postgresSchema(t testing.TB, base string) *gorm.DB {
	t.Helper()
	u, drop, err := database.NewSchema(base, "t_")
	if err != nil {
		t.Fatalf("fresh schema: %v", err)
	}
	t.Cleanup(func() { _ = drop() })
	db, err := database.Open(u, "")
	if err != nil {
		t.Fatalf("open postgres schema: %v", err)
	}
	return db
}
