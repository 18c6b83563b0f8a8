package usecases

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/expd/expd/scores"
	"github.com/expd/expd/validate"
)

// Review is a reviewer's human score of one model call, given from the
// dashboard's call explorer.
type Review struct {
	CallID  string
	Name    string
	Value   float64
	Comment string
}

// ReviewCall stores r as a human score of the org's call, with the
// reviewer (a dashboard user id) as its evaluator: a later review of the
// same call and name replaces it, like any score of the same key. It goes
// through the same write path as POST /v1/scores (validation, allowance,
// group commit), so a bad review is the same field errors.
func (s Service) ReviewCall(ctx context.Context, orgID, reviewer string, r Review) error {
	if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
		return validate.New("value", "must be a finite number")
	}
	snap, err := s.SDK.Configs.Get(ctx, orgID)
	if err != nil {
		return fmt.Errorf("review call: %w", err)
	}
	source := scores.SourceHuman
	sc := scores.Score{CallID: r.CallID, Name: r.Name, Value: json.RawMessage(strconv.FormatFloat(r.Value, 'g', -1, 64)),
		Source: &source, Evaluator: &reviewer}
	if r.Comment != "" {
		sc.Comment = &r.Comment
	}
	_, err = s.Ingest.Scores(ctx, snap, []scores.Score{sc}, false)
	return err
}
