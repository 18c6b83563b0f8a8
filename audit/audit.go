// Package audit owns the append-only audit log (table audit_log): who did
// what to an org's experiments, keys, plan and webhook endpoints, and when.
// Record writes inside the caller's transaction so an action and its audit
// row commit together; nothing in this package updates or deletes a row.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/datatypes"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/internal/pagecursor"
)

// Actions recorded in the log.
const (
	ExperimentCreated      = "experiment.created"
	ExperimentUpdated      = "experiment.updated"
	ExperimentScheduled    = "experiment.scheduled"
	ExperimentStarted      = "experiment.started"
	ExperimentStopped      = "experiment.stopped"
	ExperimentShipped      = "experiment.shipped"
	GuardrailBreached      = "guardrail.breached"
	SRMFailed              = "srm.failed"
	KeyRotated             = "key.rotated"
	PlanChanged            = "plan.changed"
	WebhookEndpointCreated = "webhook_endpoint.created"
	WebhookEndpointDeleted = "webhook_endpoint.deleted"
	// WebhookEndpointDisabled: the receiver answered 410 Gone.
	WebhookEndpointDisabled = "webhook_endpoint.disabled"
	ManagementTokenCreated  = "management_token.created"
	ManagementTokenRevoked  = "management_token.revoked"
	// ManagementTokenRefused: a revoked or expired token was presented
	// (recorded at most once per token and hour).
	ManagementTokenRefused = "management_token.refused"
	EvaluatorCreated       = "evaluator.created"
	EvaluatorUpdated       = "evaluator.updated"
	EvaluatorDeleted       = "evaluator.deleted"
	// ErasureRequested and ErasureCompleted name the user by the keyed
	// hash of their id, never by the id (package erasure).
	ErasureRequested = "erasure.requested"
	ErasureCompleted = "erasure.completed"
	// PrivacyUpdated: PUT /v1/privacy (payload policy, custom patterns,
	// retention).
	PrivacyUpdated = "privacy.updated"
	LayerCreated   = "layer.created"
	LayerUpdated   = "layer.updated"
	// HoldoutCreated and HoldoutUpdated keep the holdout's id, name,
	// percent and layer, before and after.
	HoldoutCreated = "holdout.created"
	HoldoutUpdated = "holdout.updated"
)

// legacyActions maps actions recorded under an older name to today's:
// starts were recorded as experiment.running before the log used the
// event names. Rows are never rewritten (append-only); they are read
// under today's name and found by it.
var legacyActions = map[string]string{"experiment.running": ExperimentStarted}

// canonical is the name an action is shown and filtered under.
func canonical(action string) string {
	if now, ok := legacyActions[action]; ok {
		return now
	}
	return action
}

// recordedAs lists the names action may be recorded under.
func recordedAs(action string) []string {
	names := []string{action}
	for old, now := range legacyActions {
		if now == action {
			names = append(names, old)
		}
	}
	return names
}

// SystemActor is the actor of actions expd takes by itself; the entry's
// WorkflowID then says which workflow took it.
const SystemActor = "system"

// Entry is one recorded action. Before and After are small summaries of
// the changed object (any JSON-encodable value; nil when there is none).
type Entry struct {
	OrgID        string
	ExperimentID string
	Action       string
	Actor        string // identity-provider user id, or SystemActor
	WorkflowID   string // set when Actor is SystemActor
	Summary      string // one human-readable line
	Before       any
	After        any
	// DedupKey, when set, makes the entry recorded at most once per org:
	// a retried activity records its action once.
	DedupKey string
	At       time.Time // zero: now
}

// row is the table's shape.
type row struct {
	ID           string `gorm:"primaryKey"`
	OrgID        string
	ExperimentID string
	Action       string
	Actor        string
	WorkflowID   string
	Summary      string
	BeforeState  datatypes.JSON
	AfterState   datatypes.JSON
	DedupKey     *string
	CreatedAt    time.Time
}

func (row) TableName() string { return "audit_log" }

// Record appends e using db, which should be the transaction of the action
// itself. An entry whose DedupKey was recorded before is ignored.
func Record(ctx context.Context, db *gorm.DB, e Entry) error {
	_, err := RecordOnce(ctx, db, e)
	return err
}

// RecordOnce is Record that tells whether this call wrote the entry: false
// when its DedupKey was recorded before (by an earlier attempt, another
// run, or a concurrent transaction that committed first). A system action
// taken at most once records first and acts only when this is true.
func RecordOnce(ctx context.Context, db *gorm.DB, e Entry) (bool, error) {
	if e.OrgID == "" || e.Action == "" || e.Actor == "" {
		return false, fmt.Errorf("audit entry %q needs an org, an action and an actor", e.Action)
	}
	before, err := encode(e.Before)
	if err != nil {
		return false, err
	}
	after, err := encode(e.After)
	if err != nil {
		return false, err
	}
	at := e.At
	if at.IsZero() {
		at = time.Now()
	}
	r := row{ID: uuid.NewString(), OrgID: e.OrgID, ExperimentID: e.ExperimentID, Action: e.Action,
		Actor: e.Actor, WorkflowID: e.WorkflowID, Summary: e.Summary, BeforeState: before, AfterState: after,
		CreatedAt: at.UTC().Truncate(time.Microsecond)}
	q := db.WithContext(ctx)
	if e.DedupKey != "" {
		r.DedupKey = &e.DedupKey
		q = q.Clauses(clause.OnConflict{DoNothing: true})
	}
	res := q.Create(&r)
	if res.Error != nil {
		return false, fmt.Errorf("record audit %s: %w", e.Action, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// Recorded tells whether the org has an entry with dedupKey, and which
// workflow recorded it ("" for a user's action).
func Recorded(ctx context.Context, db *gorm.DB, orgID, dedupKey string) (workflowID string, ok bool, err error) {
	var rows []row
	err = db.WithContext(ctx).Select("workflow_id").Where("org_id = ? AND dedup_key = ?", orgID, dedupKey).Limit(1).Find(&rows).Error
	if err != nil {
		return "", false, fmt.Errorf("look up audit entry %s: %w", dedupKey, err)
	}
	if len(rows) == 0 {
		return "", false, nil
	}
	return rows[0].WorkflowID, true, nil
}

func encode(v any) (datatypes.JSON, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode audit state: %w", err)
	}
	return b, nil
}

// View is an entry as GET /v1/audit shows it.
type View struct {
	ID           string          `json:"id"`
	At           time.Time       `json:"at"`
	OrgID        string          `json:"org_id"`
	ExperimentID string          `json:"experiment_id,omitempty"`
	Action       string          `json:"action"`
	Actor        string          `json:"actor"`
	WorkflowID   string          `json:"workflow_id,omitempty"`
	Summary      string          `json:"summary,omitempty"`
	Before       json.RawMessage `json:"before,omitempty"`
	After        json.RawMessage `json:"after,omitempty"`
}

// Query selects a page of an org's log, newest first.
type Query struct {
	ExperimentID string // "": every entry of the org
	Action       string // "": every action
	Cursor       string // the Next of the previous page; "": the newest
	Limit        int
}

// Page is one page; Next is "" on the last one.
type Page struct {
	Entries []View `json:"entries"`
	Next    string `json:"next_cursor,omitempty"`
}

// ErrBadCursor is returned for a cursor this package did not issue.
var ErrBadCursor = pagecursor.ErrInvalid

// List returns one page of the org's log, newest first (by time, then id).
func List(ctx context.Context, db *gorm.DB, orgID string, q Query) (Page, error) {
	tx := db.WithContext(ctx).Where("org_id = ?", orgID)
	if q.ExperimentID != "" {
		tx = tx.Where("experiment_id = ?", q.ExperimentID)
	}
	if q.Action != "" {
		tx = tx.Where("action IN ?", recordedAs(canonical(q.Action)))
	}
	if q.Cursor != "" {
		at, id, err := pagecursor.Decode(q.Cursor)
		if err != nil {
			return Page{}, err
		}
		tx = tx.Where("created_at < ? OR (created_at = ? AND id < ?)", at, at, id)
	}
	var rows []row
	if err := tx.Order("created_at DESC, id DESC").Limit(q.Limit + 1).Find(&rows).Error; err != nil {
		return Page{}, fmt.Errorf("list audit log: %w", err)
	}
	page := Page{Entries: make([]View, 0, min(len(rows), q.Limit))}
	for i, r := range rows {
		if i == q.Limit {
			last := rows[i-1]
			page.Next = pagecursor.Encode(last.CreatedAt, last.ID)
			break
		}
		page.Entries = append(page.Entries, View{ID: r.ID, At: r.CreatedAt.UTC(), OrgID: r.OrgID, ExperimentID: r.ExperimentID,
			Action: canonical(r.Action), Actor: r.Actor, WorkflowID: r.WorkflowID, Summary: r.Summary,
			Before: json.RawMessage(r.BeforeState), After: json.RawMessage(r.AfterState)})
	}
	return page, nil
}
