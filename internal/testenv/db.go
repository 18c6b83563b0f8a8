// Package testenv is the shared test harness: a fresh database per call
// (its own PostgreSQL schema when DATABASE_URL is set, else a SQLite file),
// migrated; orgs with keys and session tokens; and the real router.
package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"gorm.io/gorm"

	"github.com/expd/expd/models"
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
		db, err = models.OpenSQLite(filepath.Join(t.TempDir(), "expd.db"))
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
	} else {
		db = postgresSchema(t, base)
	}
	if _, err := models.Migrate(db); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	return db
}

// PostgresURL returns DATABASE_URL pointed at a fresh schema (created now,
// dropped at cleanup), for code under test that opens its own connections.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return ""
	}
	schema := newSchema(t, base)
	return withSearchPath(t, base, schema)
}

func postgresSchema(t testing.TB, base string) *gorm.DB {
	schema := newSchema(t, base)
	db, err := models.Open(withSearchPath(t, base, schema), "")
	if err != nil {
		t.Fatalf("open postgres schema %s: %v", schema, err)
	}
	return db
}

func newSchema(t testing.TB, base string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	admin, err := models.Open(base, "")
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatalf("create schema: %v", err)
	}
	sqlAdmin, _ := admin.DB()
	t.Cleanup(func() {
		_ = admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
		_ = sqlAdmin.Close()
	})
	return schema
}

func withSearchPath(t testing.TB, base, schema string) string {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
