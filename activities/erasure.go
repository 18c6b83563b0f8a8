package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/erasure"
	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/results"
	"github.com/expd/expd/vocab"
)

// EraseTableInput names one erasure and one of erasure.Tables. The user
// id is not here: it is read from the erasure's row, so it never enters
// the workflow's history (docs/privacy.md "Erasure").
type EraseTableInput struct {
	ErasureID string
	Table     string
}

// EraseTableResult counts the rows this attempt removed.
type EraseTableResult struct {
	Removed int64
}

// EraseTable removes the erasure's user's rows from one table through the
// table's owner and adds the count to the erasure's row. Idempotent: a
// retry finds less or nothing left to remove; an erasure completed
// already removes nothing. Scores and evaluations are found through the
// user's model calls, so they go before the events.
func (a *Activities) EraseTable(ctx context.Context, in EraseTableInput) (EraseTableResult, error) {
	sub, err := erasure.Open(ctx, a.DB, a.Secrets, in.ErasureID)
	if errors.Is(err, erasure.ErrDone) {
		return EraseTableResult{}, nil
	}
	if err != nil {
		return EraseTableResult{}, err
	}
	// A long statement (a ClickHouse mutation at 10 M events) shows its
	// worker alive; a dead worker's step is retried soon after.
	var n int64
	if activity.IsActivity(ctx) {
		hb := startHeartbeat(ctx, "erasing "+in.Table)
		n, err = a.eraseTable(ctx, sub, in.Table)
		hb.stop()
	} else {
		n, err = a.eraseTable(ctx, sub, in.Table)
	}
	if err == nil {
		err = erasure.AddRemoved(ctx, a.DB, in.ErasureID, in.Table, n)
	}
	if err != nil {
		return EraseTableResult{}, scrub(fmt.Errorf("erase %s of erasure %s: %w", in.Table, in.ErasureID, err), sub.UserID)
	}
	return EraseTableResult{Removed: n}, nil
}

func (a *Activities) eraseTable(ctx context.Context, sub erasure.Subject, table string) (int64, error) {
	switch table {
	case erasure.TableScores, erasure.TableEvaluations:
		calls, err := a.userCalls(ctx, sub)
		if err != nil || len(calls) == 0 {
			return 0, err
		}
		if table == erasure.TableScores {
			return a.events().DeleteScores(ctx, sub.OrgID, calls)
		}
		return evaluators.DeleteCalls(ctx, a.DB, sub.OrgID, calls)
	case erasure.TableEvents:
		// Every instance's ingest sees the tombstone first, so none
		// stores the user's events after this step deleted them.
		if err := erasure.WaitForTombstone(ctx, sub.Requested); err != nil {
			return 0, err
		}
		return a.events().DeleteUser(ctx, sub.OrgID, sub.UserID)
	case erasure.TableAssignments:
		return assignments.DeleteUser(ctx, a.DB, sub.OrgID, sub.UserID)
	case erasure.TableResultRollups:
		return results.DeleteUserRollups(ctx, a.DB, sub.OrgID, sub.UserID)
	}
	return 0, fmt.Errorf("unknown table %q", table)
}

// userCalls returns the event ids of the user's model calls (what their
// scores and evaluations are keyed by).
func (a *Activities) userCalls(ctx context.Context, sub erasure.Subject) ([]string, error) {
	rows, err := a.events().ReadUser(ctx, sub.OrgID, sub.UserID)
	if err != nil {
		return nil, err
	}
	var calls []string
	for _, r := range rows {
		if r.Type == vocab.TypeModelCall {
			calls = append(calls, r.EventID)
		}
	}
	return calls, nil
}

// scrub keeps the user id out of an error, which Temporal records in the
// workflow's history and the worker logs.
func scrub(err error, userID string) error {
	if userID == "" || !strings.Contains(err.Error(), userID) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), userID, "<erased user>"))
}

// CompleteErasureInput names the erasure to complete.
type CompleteErasureInput struct {
	ErasureID string
}

// CompleteErasureResult is the erasure's counts per table.
type CompleteErasureResult struct {
	Removed map[string]int64
}

// CompleteErasure marks the erasure completed, clears its sealed user id
// and records the audit entry (once, whatever the retries).
func (a *Activities) CompleteErasure(ctx context.Context, in CompleteErasureInput) (CompleteErasureResult, error) {
	v, err := erasure.Complete(ctx, a.DB, in.ErasureID, workflowID(ctx), a.now())
	if err != nil {
		return CompleteErasureResult{}, err
	}
	return CompleteErasureResult{Removed: v.Removed}, nil
}
