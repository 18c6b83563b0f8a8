// Package calls reads an experiment's model calls with their scores, for
// the call explorer: GET /v1/experiments/:id/calls and the dashboard's
// calls page share Parse and Read (docs/quality.md, "The call explorer").
package calls

import (
	"context"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/pagecursor"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/vocab"
)

// Bounds of a page.
const (
	DefaultLimit   = 50
	MaxLimit       = 500
	maxCursorBytes = 512
)

// Query is a validated filter of an experiment's calls. Zero fields do not
// filter.
type Query struct {
	Variant, Model     string
	Error              *bool
	Score              string // a score name; with ScoreMin/ScoreMax, calls scored in that range
	ScoreMin, ScoreMax *float64
	From, To           time.Time
	Cursor             string
	Limit              int
}

// Parse validates the query parameters variant, model, error, score,
// score_min, score_max, from, to (RFC 3339), cursor and limit, naming
// every bad one.
func Parse(v url.Values) (Query, error) {
	q := Query{Variant: v.Get("variant"), Model: v.Get("model"), Score: v.Get("score"), Cursor: v.Get("cursor"), Limit: DefaultLimit}
	var errs validate.Errors
	errs.Text("variant", q.Variant, 64, false)
	errs.Text("model", q.Model, vocab.MaxModelLen, false)
	errs.Name("score", q.Score)
	errs.Text("cursor", q.Cursor, maxCursorBytes, false)
	if raw := v.Get("error"); raw != "" {
		b, err := strconv.ParseBool(raw)
		if err != nil {
			errs.Add("error", "must be true or false")
		}
		q.Error = &b
	}
	q.ScoreMin = number(&errs, v, "score_min")
	q.ScoreMax = number(&errs, v, "score_max")
	if (q.ScoreMin != nil || q.ScoreMax != nil) && q.Score == "" {
		errs.Add("score", "is required with score_min or score_max")
	}
	if q.ScoreMin != nil && q.ScoreMax != nil && *q.ScoreMin > *q.ScoreMax {
		errs.Add("score_min", "must not be above score_max")
	}
	q.From = instant(&errs, v, "from")
	q.To = instant(&errs, v, "to")
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		errs.Add("from", "must be before to")
	}
	q.Limit = errs.Limit(v.Get("limit"), v.Get("limit") != "", DefaultLimit, MaxLimit)
	if q.Cursor != "" {
		if _, _, err := pagecursor.DecodeID(q.Cursor, validate.ValidID); err != nil {
			errs.Add("cursor", "%v", err)
		}
	}
	return q, errs.Err()
}

func number(errs *validate.Errors, v url.Values, name string) *float64 {
	raw := v.Get(name)
	if raw == "" {
		return nil
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		errs.Add(name, "must be a finite number")
		return nil
	}
	return &f
}

func instant(errs *validate.Errors, v url.Values, name string) time.Time {
	raw := v.Get(name)
	if raw == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		errs.Add(name, "must be RFC 3339, like 2026-11-20T10:00:00Z")
	}
	return t.UTC()
}

// Score is one score of a call as the explorer shows it.
type Score struct {
	Name             string  `json:"name"`
	Value            float64 `json:"value"`
	Source           string  `json:"source"`
	Evaluator        *string `json:"evaluator"`
	EvaluatorVersion *string `json:"evaluator_version"`
	JudgeModel       *string `json:"judge_model"`
	Comment          *string `json:"comment"`
	Timestamp        string  `json:"timestamp"`
}

// Call is one model call with its scores.
type Call struct {
	CallID    string `json:"call_id"`
	UserID    string `json:"user_id"`
	Variant   string `json:"variant"`
	Timestamp string `json:"timestamp"`
	vocab.ModelCall
	Scores []Score `json:"scores"`
}

// Page is one page of calls, newest first; NextCursor reads the next.
type Page struct {
	ExperimentID string `json:"experiment_id"`
	Calls        []Call `json:"calls"`
	NextCursor   string `json:"next_cursor,omitempty"`
}

// Read returns one page of the experiment's calls that pass q, with their
// scores, both from the events store (on ClickHouse the scores live
// there, not in the relational database).
func Read(ctx context.Context, events ingest.EventStore, orgID, experimentID string, q Query) (Page, error) {
	f := ingest.CallFilter{OrgID: orgID, ExperimentID: experimentID, Variant: q.Variant, Model: q.Model,
		Error: q.Error, From: q.From, To: q.To, Limit: q.Limit + 1}
	if q.Score != "" {
		f.Scored = &scores.Range{Name: q.Score, Min: q.ScoreMin, Max: q.ScoreMax}
	}
	if q.Cursor != "" {
		var err error
		if f.BeforeTs, f.BeforeID, err = pagecursor.DecodeID(q.Cursor, validate.ValidID); err != nil {
			return Page{}, err
		}
	}
	rows, err := events.ReadCalls(ctx, f)
	if err != nil {
		return Page{}, err
	}
	page := Page{ExperimentID: experimentID, Calls: make([]Call, 0, min(len(rows), q.Limit))}
	if len(rows) > q.Limit {
		rows = rows[:q.Limit]
		last := rows[len(rows)-1]
		page.NextCursor = pagecursor.Encode(last.Ts, last.EventID)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.EventID
	}
	scored, err := events.ScoresOfCalls(ctx, orgID, ids)
	if err != nil {
		return Page{}, err
	}
	for _, r := range rows {
		c := Call{CallID: r.EventID, UserID: r.UserID, Variant: r.Variant, Timestamp: stamp(r.Ts), ModelCall: r.ModelCall, Scores: []Score{}}
		for _, s := range scored[r.EventID] {
			c.Scores = append(c.Scores, Score{Name: s.Name, Value: s.Value, Source: s.Source, Evaluator: s.Evaluator,
				EvaluatorVersion: s.EvaluatorVersion, JudgeModel: s.JudgeModel, Comment: s.Comment, Timestamp: stamp(s.Ts)})
		}
		page.Calls = append(page.Calls, c)
	}
	return page, nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
