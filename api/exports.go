package api

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// exportPage is the events read per query of an export: memory stays
// bounded whatever the user's history.
const exportPage = 1000

// exportLine is one line of an export; Type says which field it carries.
type exportLine struct {
	Type       string            `json:"type"`
	Event      *storedEvent      `json:"event,omitempty"`
	Score      *exportScore      `json:"score,omitempty"`
	Assignment *exportAssignment `json:"assignment,omitempty"`
}

type exportScore struct {
	CallID           string    `json:"call_id"`
	Name             string    `json:"name"`
	Source           string    `json:"source"`
	Value            float64   `json:"value"`
	Timestamp        time.Time `json:"timestamp"`
	ReceivedAt       time.Time `json:"received_at"`
	Comment          *string   `json:"comment"`
	Evaluator        *string   `json:"evaluator"`
	EvaluatorVersion *string   `json:"evaluator_version"`
	JudgeModel       *string   `json:"judge_model"`
}

type exportAssignment struct {
	ExperimentID string    `json:"experiment_id"`
	Variant      string    `json:"variant"`
	Source       string    `json:"source"`
	CreatedAt    time.Time `json:"created_at"`
}

// POST /v1/exports (admin): one user's events (each followed by the
// scores of the model calls among them), then their assignments, as
// NDJSON streamed page by page. An unknown user is an empty body.
func (h *handlers) createExport(c *gin.Context) {
	var req userRequest
	if !decodeJSON(c, &req) {
		return
	}
	if err := req.check(); err != nil {
		invalid(c, err)
		return
	}
	ctx, org := c.Request.Context(), orgID(c)
	// The first page is read before the answer starts, so a database
	// that is down still gets a problem, not a truncated 200.
	page, err := h.deps.Events.ReadUserPage(ctx, org, req.UserID, ingest.UserPosition{}, exportPage)
	if err != nil {
		internalError(c, err)
		return
	}
	c.Header("Content-Type", "application/x-ndjson")
	c.Status(http.StatusOK)
	enc := json.NewEncoder(c.Writer)
	if err := h.streamExport(c, enc, org, req.UserID, page); err != nil {
		// The status is sent; the client sees a body cut short (no final
		// newline-terminated line is half written: lines are encoded whole).
		slog.ErrorContext(ctx, "export cut short", "request_id", requestID(c), "error", err)
	}
}

func (h *handlers) streamExport(c *gin.Context, enc *json.Encoder, org, userID string, page []ingest.EventRow) error {
	ctx := c.Request.Context()
	for len(page) > 0 {
		var calls []string
		for _, r := range page {
			ev := showEvent(r)
			if err := enc.Encode(exportLine{Type: "event", Event: &ev}); err != nil {
				return err
			}
			if r.Type == vocab.TypeModelCall {
				calls = append(calls, r.EventID)
			}
		}
		if len(calls) > 0 {
			byCall, err := h.deps.Events.ScoresOfCalls(ctx, org, calls)
			if err != nil {
				return err
			}
			for _, call := range calls {
				for _, s := range byCall[call] {
					if err := enc.Encode(exportLine{Type: "score", Score: showScore(s)}); err != nil {
						return err
					}
				}
			}
		}
		c.Writer.Flush()
		if len(page) < exportPage {
			break
		}
		last := page[len(page)-1]
		var err error
		if page, err = h.deps.Events.ReadUserPage(ctx, org, userID, ingest.UserPosition{AfterTs: last.Ts, AfterID: last.EventID}, exportPage); err != nil {
			return err
		}
	}
	pins, err := assignments.OfUser(ctx, h.deps.DB, org, userID)
	if err != nil {
		return err
	}
	for _, p := range pins {
		if err := enc.Encode(exportLine{Type: "assignment", Assignment: &exportAssignment{ExperimentID: p.ExperimentID, Variant: p.Variant, Source: p.Source, CreatedAt: p.CreatedAt.UTC()}}); err != nil {
			return fmt.Errorf("write assignment: %w", err)
		}
	}
	c.Writer.Flush()
	return nil
}

func showScore(s scores.Row) *exportScore {
	return &exportScore{CallID: s.CallID, Name: s.Name, Source: s.Source, Value: s.Value, Timestamp: s.Ts.UTC(), ReceivedAt: s.ReceivedAt.UTC(),
		Comment: s.Comment, Evaluator: s.Evaluator, EvaluatorVersion: s.EvaluatorVersion, JudgeModel: s.JudgeModel}
}
