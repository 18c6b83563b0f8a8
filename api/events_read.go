package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/vocab"
)

// Bounds of GET /v1/experiments/:id/events (docs/events-read.md).
const (
	defaultEventsLimit = 100
	maxEventsLimit     = 1000
)

// storedEvent is one events row as the read-back route shows it: the
// fields an event is sent with (the same wire shape as ingest), null where
// its type does not carry them, plus what the server stamped on it.
type storedEvent struct {
	ingest.Event
	ReceivedAt string `json:"received_at"`
	Source     string `json:"source"`
}

type eventsPage struct {
	ExperimentID string        `json:"experiment_id"`
	Events       []storedEvent `json:"events"`
	privacy.InForce
}

// eventsFilter is the validated query of the read-back route.
type eventsFilter struct {
	eventType vocab.RecordType
	userID    string
	limit     int
}

func parseEventsFilter(c *gin.Context) (eventsFilter, error) {
	f := eventsFilter{eventType: vocab.RecordType(c.Query("type")), userID: c.Query("user_id"), limit: defaultEventsLimit}
	var errs validate.Errors
	if f.eventType != "" && !f.eventType.Valid() {
		errs.Add("type", "must be %s", vocab.JoinOr(vocab.RecordTypes, "%s"))
	}
	if _, given := c.GetQuery("user_id"); given {
		errs.Text("user_id", f.userID, ingest.MaxUserIDLen, true)
	}
	raw, given := c.GetQuery("limit")
	f.limit = errs.Limit(raw, given, f.limit, maxEventsLimit)
	return f, errs.Err()
}

// GET /v1/experiments/:id/events?type=&user_id=&limit= (additive): the
// experiment's stored events, newest first, for the dashboard's recent
// events and for reading events back in tests.
func (h *handlers) listEvents(c *gin.Context) {
	ctx := c.Request.Context()
	filter, err := parseEventsFilter(c)
	if err != nil {
		invalid(c, err)
		return
	}
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	rows, err := h.deps.Events.Read(ctx, ingest.ReadFilter{OrgID: orgID(c), ExperimentID: exp.ID,
		Type: filter.eventType, UserID: filter.userID, Limit: filter.limit})
	if err != nil {
		internalError(c, err)
		return
	}
	inForce, err := h.privacyStore().InForce(c.Request.Context(), orgID(c), exp.PayloadPolicy)
	if err != nil {
		internalError(c, err)
		return
	}
	page := eventsPage{ExperimentID: exp.ID, Events: make([]storedEvent, len(rows)), InForce: inForce}
	for i, r := range rows {
		page.Events[i] = showEvent(r)
	}
	c.JSON(http.StatusOK, page)
}

func showEvent(r ingest.EventRow) storedEvent {
	e := storedEvent{
		Event: ingest.Event{
			EventID: r.EventID, Type: r.Type, ExperimentID: r.ExperimentID, UserID: r.UserID,
			Timestamp:     r.Ts.UTC().Format(time.RFC3339Nano),
			ConfigVersion: r.ConfigVersion, ModelCall: r.ModelCall, BusinessMetric: r.BusinessMetric, Value: r.Value,
		},
		ReceivedAt: r.ReceivedAt.UTC().Format(time.RFC3339Nano),
		Source:     r.Source,
	}
	// The column holds '' for events sent without a variant.
	if r.Variant != "" {
		e.Variant = &r.Variant
	}
	return e
}
