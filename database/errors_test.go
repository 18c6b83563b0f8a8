package database

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestIsUnavailable(t *testing.T) {
	yes := []error{
		fmt.Errorf("query: %w", io.ErrUnexpectedEOF),
		fmt.Errorf("wrapped: %w", driver.ErrBadConn),
		&net.OpError{Op: "dial", Err: errors.New("connection refused")},
		&pgconn.PgError{Code: "57P01"},
		&pgconn.PgError{Code: "08006"},
		&pgconn.PgError{Code: "53300"},
		errors.New("database is locked (5) (SQLITE_BUSY)"),
	}
	no := []error{nil, errors.New("syntax error"), &pgconn.PgError{Code: "23505"}, &pgconn.PgError{Code: "42P01"}}
	for _, err := range yes {
		if !IsUnavailable(err) {
			t.Errorf("%v: not unavailable", err)
		}
	}
	for _, err := range no {
		if IsUnavailable(err) {
			t.Errorf("%v: unavailable", err)
		}
	}
	if !IsUniqueViolation(&pgconn.PgError{Code: "23505"}) || !IsUniqueViolation(errors.New("constraint failed: UNIQUE constraint failed: x.y (2067)")) || IsUniqueViolation(errors.New("x")) {
		t.Fatal("IsUniqueViolation")
	}
}
