package database_test

import (
	"os"
	"strings"
	"testing"

	"github.com/expd/expd/database"
)

// PostgreSQL connections run without JIT unless DATABASE_URL asks for it.
func TestOpenTurnsPostgresJITOffUnlessAsked(t *testing.T) {
	base := os.Getenv("DATABASE_URL")
	if !strings.HasPrefix(base, "postgres") {
		t.Skip("DATABASE_URL is not PostgreSQL")
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	for url, want := range map[string]string{base: "off", base + sep + "jit=on": "on"} {
		db, err := database.Open(url, "")
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.Raw("SHOW jit").Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("jit = %q, want %q", got, want)
		}
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	}
}
