package database

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one numbered schema step. Its SQL is written once, with
// {{uuid}}, {{json}}, {{timestamp}} and {{float}} placeholders that each
// dialect fills with its own column types, and {{concurrently}} (PostgreSQL's
// CREATE INDEX CONCURRENTLY; nothing on SQLite). A file named
// NNNN_name.<dialect>.sql (Dialect set) runs on that dialect only; the
// others record its version as applied without running anything, so every
// database has the same list of versions.
//
// A file whose first line is NoTransactionMarker runs statement by statement
// outside a transaction: PostgreSQL refuses CREATE INDEX CONCURRENTLY inside
// one. Such a migration must be safe to re-run after a partial failure
// (CREATE INDEX CONCURRENTLY IF NOT EXISTS, after dropping an INVALID index).
type Migration struct {
	Version       int
	Name          string
	Dialect       string
	SQL           string
	NoTransaction bool
}

// NoTransactionMarker, as a migration's first line, runs it outside a
// transaction.
const NoTransactionMarker = "-- expd:no-transaction"

// ErrNotMigrated is returned by CheckMigrated when the schema is behind the
// code. Servers refuse to start on it.
var ErrNotMigrated = errors.New("database schema is not migrated")

var dialectTypes = map[string]*strings.Replacer{
	"postgres": strings.NewReplacer("{{uuid}}", "UUID", "{{json}}", "JSONB", "{{timestamp}}", "TIMESTAMPTZ", "{{float}}", "DOUBLE PRECISION", "{{concurrently}}", "CONCURRENTLY"),
	"sqlite":   strings.NewReplacer("{{uuid}}", "TEXT", "{{json}}", "TEXT", "{{timestamp}}", "DATETIME", "{{float}}", "REAL", "{{concurrently}}", ""),
}

// Migrations lists the embedded migrations in version order. File names are
// NNNN_name.sql.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		if !ok {
			return nil, fmt.Errorf("migration %q: want NNNN_name.sql", e.Name())
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %q: version: %w", e.Name(), err)
		}
		body, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", e.Name(), err)
		}
		m := newMigration(v, name, string(body))
		if base, dialect, ok := strings.Cut(name, "."); ok {
			if _, known := dialectTypes[dialect]; !known {
				return nil, fmt.Errorf("migration %q: unknown dialect %q", e.Name(), dialect)
			}
			m.Name, m.Dialect = base, dialect
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("two migrations share version %d", out[i].Version)
		}
	}
	return out, nil
}

func newMigration(version int, name, sql string) Migration {
	first, _, _ := strings.Cut(sql, "\n")
	return Migration{Version: version, Name: name, SQL: sql, NoTransaction: strings.TrimSpace(first) == NoTransactionMarker}
}

type schemaMigration struct {
	Version   int `gorm:"primaryKey"`
	Name      string
	AppliedAt time.Time
}

func (schemaMigration) TableName() string { return "schema_migrations" }

// Migrate applies every migration that the database has not seen yet, each
// in its own transaction (or none, see NoTransactionMarker), and returns the
// versions it applied.
//
// On PostgreSQL it holds a session advisory lock keyed by the current schema
// for the whole run, so two `expd migrate` or `expd dev` at once apply each
// migration once: the second waits, then finds nothing left to do.
func Migrate(db *gorm.DB) ([]int, error) { return MigrateTo(db, 1<<31-1) }

// MigrateTo is Migrate stopping after version last: tests build a
// database of an older schema with it.
func MigrateTo(db *gorm.DB, last int) ([]int, error) {
	migs, err := Migrations()
	if err != nil {
		return nil, err
	}
	var upTo []Migration
	for _, m := range migs {
		if m.Version <= last {
			upTo = append(upTo, m)
		}
	}
	return apply(db, upTo)
}

// migrateLock names the advisory lock of a schema's migrations.
const migrateLock = "expd.migrate."

func apply(db *gorm.DB, migs []Migration) (done []int, err error) {
	repl, ok := dialectTypes[db.Dialector.Name()]
	if !ok {
		return nil, fmt.Errorf("migrate: unsupported dialect %q", db.Dialector.Name())
	}
	// One pinned connection: a session advisory lock belongs to it.
	err = db.Connection(func(conn *gorm.DB) error {
		conn = conn.Session(&gorm.Session{}) // each call below a fresh statement on this connection
		if IsPostgres(conn) {
			if err := lockMigrations(conn); err != nil {
				return err
			}
			defer conn.Exec("SELECT pg_advisory_unlock(hashtext(? || current_schema()))", migrateLock)
		}
		if err := conn.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at ` + repl.Replace("{{timestamp}}") + ` NOT NULL)`).Error; err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		// Read under the lock: what another run applied meanwhile is skipped.
		applied, err := appliedVersions(conn)
		if err != nil {
			return err
		}
		for _, m := range migs {
			if applied[m.Version] {
				continue
			}
			if err := applyOne(conn, repl, m); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
			}
			done = append(done, m.Version)
		}
		return nil
	})
	return done, err
}

// lockMigrations polls pg_try_advisory_lock rather than blocking in
// pg_advisory_lock: a waiting statement holds a snapshot, and CREATE INDEX
// CONCURRENTLY in the holder's migration would wait for that snapshot,
// a deadlock.
func lockMigrations(conn *gorm.DB) error {
	wait := 50 * time.Millisecond
	for {
		var got bool
		if err := conn.Raw("SELECT pg_try_advisory_lock(hashtext(? || current_schema()))", migrateLock).Scan(&got).Error; err != nil {
			return fmt.Errorf("take migration lock: %w", err)
		}
		if got {
			return nil
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

func applyOne(conn *gorm.DB, repl *strings.Replacer, m Migration) error {
	sql := repl.Replace(m.SQL)
	if m.Dialect != "" && m.Dialect != conn.Dialector.Name() {
		sql = "" // another dialect's step: recorded, not run
	}
	run := func(tx *gorm.DB) error {
		for _, stmt := range splitStatements(sql) {
			if err := tx.Exec(stmt).Error; err != nil {
				return fmt.Errorf("statement %q: %w", firstLine(stmt), err)
			}
		}
		return tx.Create(&schemaMigration{Version: m.Version, Name: m.Name, AppliedAt: time.Now().UTC()}).Error
	}
	if m.NoTransaction {
		return run(conn)
	}
	return conn.Transaction(run)
}

// CheckMigrated returns ErrNotMigrated (wrapped with the versions) when the
// database lacks a migration this binary knows.
func CheckMigrated(db *gorm.DB) error {
	migs, err := Migrations()
	if err != nil {
		return err
	}
	if !db.Migrator().HasTable("schema_migrations") {
		return fmt.Errorf("%w: no schema_migrations table (run `expd migrate`)", ErrNotMigrated)
	}
	applied, err := appliedVersions(db)
	if err != nil {
		return err
	}
	for _, m := range migs {
		if !applied[m.Version] {
			return fmt.Errorf("%w: migration %04d_%s is pending (run `expd migrate`)", ErrNotMigrated, m.Version, m.Name)
		}
	}
	return nil
}

func appliedVersions(db *gorm.DB) (map[int]bool, error) {
	var rows []schemaMigration
	if err := db.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	out := make(map[int]bool, len(rows))
	for _, r := range rows {
		out[r.Version] = true
	}
	return out, nil
}

// splitStatements splits a migration on semicolons at line ends, dropping
// comment-only lines. Migrations keep one statement per semicolon-terminated
// block, so no SQL parser is needed; inside a $$-quoted body (a PL/pgSQL
// function or DO block) line-end semicolons do not end the statement.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	inBody := false
	for _, line := range strings.Split(sql, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || (!inBody && strings.HasPrefix(trimmed, "--")) {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.Count(line, "$$")%2 == 1 {
			inBody = !inBody
		}
		if !inBody && strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
