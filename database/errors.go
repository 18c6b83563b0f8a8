package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// IsUniqueViolation tells whether err is a unique-constraint violation on
// either database. GORM's own translation covers PostgreSQL but not the
// pure-Go SQLite driver, whose errors carry only a code and a message.
func IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// IsUnavailable tells whether err is a failure a retry may cure: the
// database is down, unreachable, restarting, out of connections, or (for
// SQLite) its writer lock was held past busy_timeout. Callers answer such
// failures with 503 and Retry-After instead of 500.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, sql.ErrConnDone), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr), errors.As(err, &connectErr):
		return true
	case errors.As(err, &pgErr):
		// 08: connection exception; 53: insufficient resources; 57P0x:
		// admin shutdown, crash shutdown, cannot connect now.
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "53") ||
			pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	msg := err.Error()
	// pgx reports a connection it already closed by this text only; SQLite
	// reports a writer lock held past busy_timeout as SQLITE_BUSY.
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}
