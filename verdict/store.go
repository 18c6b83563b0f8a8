package verdict

import (
	"context"
	"encoding/json"
	"fmt"

	"gorm.io/gorm"

	"github.com/expd/expd/results"
)

// DecideAndStore decides a published run's verdict from its rows and
// stores it with the run (results.SaveVerdict). The results workflow's
// verdict step and the backfill of older runs both call it, so a verdict
// is decided one way. Repeating it is harmless: the same rows give the
// same verdict.
func DecideAndStore(ctx context.Context, db *gorm.DB, run results.Run, rows []results.Row) (Verdict, error) {
	in, err := Load(ctx, db, run, rows)
	if err != nil {
		return Verdict{}, err
	}
	v := Decide(in)
	b, err := json.Marshal(v)
	if err != nil {
		return Verdict{}, fmt.Errorf("encode verdict: %w", err)
	}
	if err := results.SaveVerdict(ctx, db, run.ExperimentID, run.ComputedFor, b); err != nil {
		return Verdict{}, err
	}
	return v, nil
}

// backfillBatch bounds the runs one query of the backfill reads.
const backfillBatch = 200

// Backfill stores the verdict of every published run that has none (runs
// published before verdicts existed), so reading them is a stored read
// like any newer run's. `expd migrate` runs it after the schema
// migrations; it touches only runs without a verdict, so running it again
// does nothing. It returns how many runs it decided.
func Backfill(ctx context.Context, db *gorm.DB) (int, error) {
	done := 0
	for {
		runs, err := results.RunsWithoutVerdict(ctx, db, backfillBatch)
		if err != nil || len(runs) == 0 {
			return done, err
		}
		for _, run := range runs {
			rows, err := results.LoadRows(ctx, db, run.OrgID, run.ExperimentID, run.ComputedFor)
			if err != nil {
				return done, err
			}
			if _, err := DecideAndStore(ctx, db, run, rows); err != nil {
				return done, fmt.Errorf("backfill verdict of run %s of %s: %w", run.ComputedFor, run.ExperimentID, err)
			}
			done++
		}
	}
}
