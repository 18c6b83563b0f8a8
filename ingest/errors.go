package ingest

import (
	"errors"
	"fmt"

	"github.com/expd/expd/database"
	"github.com/expd/expd/plans"
)

// AllowanceError refuses a whole batch that would take the org past its
// plan's monthly event allowance. Nothing of the batch is stored.
type AllowanceError struct {
	Plan      plans.Name
	Allowance int64
	Used      int64 // events stored this month before the batch
	Adding    int64 // new events the batch would store
	Month     string
}

func (e *AllowanceError) Error() string {
	return fmt.Sprintf("monthly event allowance of the %s plan (%d events) would be exceeded in %s: %d used, this batch adds %d",
		e.Plan, e.Allowance, e.Month, e.Used, e.Adding)
}

// ErrOverloaded is returned when the writer's queue is full: the database
// does not keep up, and the client should retry later.
var ErrOverloaded = errors.New("ingest queue is full")

// UnavailableError is a storage failure a retry may cure: the database is
// down, unreachable, restarting or out of connections. The batch may or
// may not have been committed (a lost COMMIT reply); a retry with the same
// event ids is safe either way.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return "database unavailable: " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// Unavailable tells whether err means the database could not be reached.
func Unavailable(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u) || errors.Is(err, ErrOverloaded)
}

// classify wraps connection-level failures in UnavailableError.
func classify(err error) error {
	if err == nil || !database.IsUnavailable(err) {
		return err
	}
	return &UnavailableError{Err: err}
}
