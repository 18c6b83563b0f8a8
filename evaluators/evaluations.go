package evaluators

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/internal/pagecursor"
	"github.com/expd/expd/secrets"
)

// Statuses of an evaluation.
const (
	StatusScored = "scored"
	StatusFailed = "failed"
)

// Sampled tells whether a call is in an evaluator's sample at rate: the
// first 8 bytes of SHA-256("expd-eval." + call id), as a fraction of
// 2^64, below rate. It depends on the call id alone, so a retry or a
// replay samples the same calls, every arm is sampled at the same rate,
// and a call sampled at a rate stays sampled at any higher rate (samples
// are nested: raising the rate adds calls, lowering it removes some).
func Sampled(callID string, rate float64) bool {
	if rate >= 1 {
		return true
	}
	sum := sha256.Sum256([]byte("expd-eval." + callID))
	return float64(binary.BigEndian.Uint64(sum[:8]))/math.Exp2(64) < rate
}

// evaluation is the evaluations table's shape.
type evaluation struct {
	EvaluatorID      string `gorm:"primaryKey"`
	CallID           string `gorm:"primaryKey"`
	OrgID            string
	EvaluatorVersion int
	Status           string
	Score            *float64
	Reason           string
	Failure          string
	Detail           string
	JudgeModel       string
	CostUSD          float64 `gorm:"column:cost_usd"`
	Day              string
	EvaluatedAt      time.Time
}

func (evaluation) TableName() string { return "evaluations" }

// Outcome is one evaluation to record.
type Outcome struct {
	OrgID, EvaluatorID, CallID string
	Version                    int
	Score                      *float64 // nil: failed
	Reason                     string
	Failure                    string // a Fail* kind when failed
	Detail                     string
	JudgeModel                 string
	CostUSD                    float64
	At                         time.Time
}

// maxDetail bounds the kept reason and failure detail.
const maxDetail = 1000

func clip(s string) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "")
	if len(s) > maxDetail {
		s = strings.ToValidUTF8(s[:maxDetail], "")
	}
	return s
}

// Day is the UTC day of t, the budget's unit.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Record stores an outcome once: recording the same (evaluator, call)
// again changes nothing and tells false.
func Record(ctx context.Context, db *gorm.DB, o Outcome) (bool, error) {
	status := StatusScored
	if o.Score == nil {
		status = StatusFailed
	}
	r := evaluation{EvaluatorID: o.EvaluatorID, CallID: o.CallID, OrgID: o.OrgID, EvaluatorVersion: o.Version, Status: status,
		Score: o.Score, Reason: clip(o.Reason), Failure: o.Failure, Detail: clip(o.Detail), JudgeModel: o.JudgeModel,
		CostUSD: o.CostUSD, Day: Day(o.At), EvaluatedAt: o.At.UTC().Truncate(time.Microsecond)}
	res := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r)
	if res.Error != nil {
		return false, fmt.Errorf("record evaluation of %s by %s: %w", o.CallID, o.EvaluatorID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// Usage is an evaluator's spend of one UTC day.
type Usage struct {
	Evaluations int64   `json:"evaluations"`
	CostUSD     float64 `json:"cost_usd"`
}

// Used returns the evaluator's usage of day.
func Used(ctx context.Context, db *gorm.DB, evaluatorID, day string) (Usage, error) {
	var u Usage
	err := db.WithContext(ctx).Model(&evaluation{}).Select("COUNT(*) AS evaluations, COALESCE(SUM(cost_usd), 0) AS cost_usd").
		Where("evaluator_id = ? AND day = ?", evaluatorID, day).Scan(&u).Error
	if err != nil {
		return u, fmt.Errorf("usage of evaluator %s on %s: %w", evaluatorID, day, err)
	}
	return u, nil
}

// DayUsage is an evaluator's usage of one UTC day.
type DayUsage struct {
	Day string
	Usage
}

// UsedByDay returns the evaluator's usage of each of the last days UTC
// days up to now's that has any, newest first.
func UsedByDay(ctx context.Context, db *gorm.DB, evaluatorID string, days int, now time.Time) ([]DayUsage, error) {
	var out []DayUsage
	err := db.WithContext(ctx).Model(&evaluation{}).Select("day, COUNT(*) AS evaluations, COALESCE(SUM(cost_usd), 0) AS cost_usd").
		Where("evaluator_id = ? AND day >= ?", evaluatorID, Day(now.AddDate(0, 0, 1-days))).
		Group("day").Order("day DESC").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("usage of evaluator %s by day: %w", evaluatorID, err)
	}
	return out, nil
}

// Evaluated returns which of callIDs the evaluator evaluated already.
func Evaluated(ctx context.Context, db *gorm.DB, evaluatorID string, callIDs []string) (map[string]bool, error) {
	done := make(map[string]bool, len(callIDs))
	for start := 0; start < len(callIDs); start += 500 {
		chunk := callIDs[start:min(start+500, len(callIDs))]
		var ids []string
		err := db.WithContext(ctx).Model(&evaluation{}).Where("evaluator_id = ? AND call_id IN ?", evaluatorID, chunk).Pluck("call_id", &ids).Error
		if err != nil {
			return nil, fmt.Errorf("evaluated calls of %s: %w", evaluatorID, err)
		}
		for _, id := range ids {
			done[id] = true
		}
	}
	return done, nil
}

// Evaluation is one evaluation as GET /v1/evaluators/{id}/evaluations
// shows it.
type Evaluation struct {
	CallID           string    `json:"call_id"`
	EvaluatorVersion int       `json:"evaluator_version"`
	Status           string    `json:"status"`
	Score            *float64  `json:"score,omitempty"`
	Reason           string    `json:"reason,omitempty"`
	Failure          string    `json:"failure,omitempty"`
	Detail           string    `json:"detail,omitempty"`
	JudgeModel       string    `json:"judge_model,omitempty"`
	CostUSD          float64   `json:"cost_usd"`
	EvaluatedAt      time.Time `json:"evaluated_at"`
}

// EvaluationPage is one page, newest first; Next is "" on the last.
type EvaluationPage struct {
	Evaluations []Evaluation `json:"evaluations"`
	Today       Usage        `json:"today"`
	Next        string       `json:"next_cursor,omitempty"`
}

// ErrBadCursor is a cursor this package did not issue.
var ErrBadCursor = pagecursor.ErrInvalid

// ListEvaluations returns a page of the org's evaluator's evaluations,
// newest first, with today's usage; status "" lists both.
func (st Store) ListEvaluations(ctx context.Context, orgID, id, status, cursor string, limit int, now time.Time) (EvaluationPage, error) {
	if _, err := find(ctx, st.DB, orgID, id); err != nil {
		return EvaluationPage{}, err
	}
	q := st.DB.WithContext(ctx).Where("evaluator_id = ? AND org_id = ?", id, orgID)
	if status != "" {
		q = q.Where("status = ?", status)
	}
	if cursor != "" {
		at, callID, err := pagecursor.Decode(cursor)
		if err != nil {
			return EvaluationPage{}, err
		}
		q = q.Where("evaluated_at < ? OR (evaluated_at = ? AND call_id < ?)", at, at, callID)
	}
	var rows []evaluation
	if err := q.Order("evaluated_at DESC, call_id DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return EvaluationPage{}, fmt.Errorf("list evaluations of %s: %w", id, err)
	}
	today, err := Used(ctx, st.DB, id, Day(now))
	if err != nil {
		return EvaluationPage{}, err
	}
	page := EvaluationPage{Evaluations: make([]Evaluation, 0, min(len(rows), limit)), Today: today}
	for i, r := range rows {
		if i == limit {
			last := rows[i-1]
			page.Next = pagecursor.Encode(last.EvaluatedAt, last.CallID)
			break
		}
		page.Evaluations = append(page.Evaluations, Evaluation{CallID: r.CallID, EvaluatorVersion: r.EvaluatorVersion, Status: r.Status,
			Score: r.Score, Reason: r.Reason, Failure: r.Failure, Detail: r.Detail, JudgeModel: r.JudgeModel, CostUSD: r.CostUSD,
			EvaluatedAt: r.EvaluatedAt.UTC()})
	}
	return page, nil
}

// Loaded is an evaluator as its activities need it: the spec with the
// judge's key opened. Deleted is set once it was deleted.
type Loaded struct {
	ID, OrgID string
	Version   int
	Deleted   bool
	Spec      Spec
}

// ErrKeyUnopenable: the judge's sealed key opens with neither of the
// server's secrets keys (Load returns the evaluator without it).
var ErrKeyUnopenable = errors.New("the judge's api key does not open with this server's secrets keys")

// Load reads an evaluator by id alone, for its activities (the workflow
// carries the id only, so the key never enters its history). keys nil
// leaves the judge's key sealed and out (a poll needs none).
func Load(ctx context.Context, db *gorm.DB, keys *secrets.Keyring, id string) (Loaded, error) {
	var r row
	if err := db.WithContext(ctx).Where("id = ?", id).Limit(1).Find(&r).Error; err != nil {
		return Loaded{}, fmt.Errorf("read evaluator %s: %w", id, err)
	}
	if r.ID == "" {
		return Loaded{}, ErrNotFound
	}
	l := Loaded{ID: r.ID, OrgID: r.OrgID, Version: r.Version, Deleted: r.DeletedAt != nil, Spec: r.view().Spec}
	if r.APIKey != "" && !l.Deleted && keys != nil {
		key, err := keys.Open(r.APIKey, r.ID)
		if err != nil {
			return l, fmt.Errorf("evaluator %s: %w (%w)", id, ErrKeyUnopenable, err)
		}
		e := *l.Spec.Endpoint
		e.APIKey = key
		l.Spec.Endpoint = &e
	}
	return l, nil
}

// Live lists the ids of every live evaluator (the worker's reconcile
// starts a workflow for each).
func Live(ctx context.Context, db *gorm.DB) ([]string, error) {
	var ids []string
	if err := db.WithContext(ctx).Model(&row{}).Where("deleted_at IS NULL").Order("id").Pluck("id", &ids).Error; err != nil {
		return nil, fmt.Errorf("list live evaluators: %w", err)
	}
	return ids, nil
}
