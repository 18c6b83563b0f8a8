package database

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	// The pure-Go SQLite driver, registered as "sqlite"; the embedded
	// Temporal server links the same one (docs/architecture.md §4).
	_ "modernc.org/sqlite"
)

// Open connects to PostgreSQL when databaseURL is a postgres:// URL, or to
// the SQLite file <dataDir>/expd.db when databaseURL is empty.
func Open(databaseURL, dataDir string) (*gorm.DB, error) {
	cfg := &gorm.Config{
		Logger:         logger.Discard,
		NowFunc:        func() time.Time { return time.Now().UTC() },
		TranslateError: true,
	}
	switch {
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		// pgx's connection config with the tracer (dbtrace.go): each
		// statement is a span under the request's or activity's span.
		pgxCfg, err := pgx.ParseConfig(databaseURL)
		if err != nil {
			return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
		}
		pgxCfg.Tracer = queryTracer{}
		// JIT off unless DATABASE_URL says otherwise (?jit=on): a results
		// run's statements are long lists of CASE expressions that
		// PostgreSQL's JIT spends seconds compiling (3.0 s of an 8.3 s
		// statement at 200,000 users, docs/results.md), and expd's other
		// statements never reach its cost threshold.
		if _, set := pgxCfg.RuntimeParams["jit"]; !set {
			pgxCfg.RuntimeParams["jit"] = "off"
		}
		sqlDB := stdlib.OpenDB(*pgxCfg)
		db, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), cfg)
		if err != nil {
			_ = sqlDB.Close()
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		sqlDB.SetMaxOpenConns(32)
		sqlDB.SetMaxIdleConns(16)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
		return db, nil
	case databaseURL == "":
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		}
		return OpenSQLite(filepath.Join(dataDir, "expd.db"))
	default:
		return nil, fmt.Errorf("DATABASE_URL must start with postgres:// (got scheme of %q)", redactURL(databaseURL))
	}
}

// OpenSQLite opens a SQLite file with WAL, foreign keys and a busy timeout,
// so concurrent API requests wait for the single writer instead of failing.
func OpenSQLite(path string) (*gorm.DB, error) {
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_time_format=sqlite"
	db, err := gorm.Open(sqlite.Dialector{DriverName: "sqlite", DSN: dsn}, &gorm.Config{
		Logger:         logger.Discard,
		NowFunc:        func() time.Time { return time.Now().UTC() },
		TranslateError: true,
	})
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	// One connection: SQLite has one writer, and a single connection turns
	// lock contention into queueing inside database/sql.
	sqlDB.SetMaxOpenConns(1)
	slog.Debug("opened sqlite", "path", path)
	return db, nil
}

// IsPostgres tells whether db talks to PostgreSQL.
func IsPostgres(db *gorm.DB) bool { return db.Dialector.Name() == "postgres" }

func redactURL(u string) string {
	scheme, _, _ := strings.Cut(u, ":")
	return scheme
}
