package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/telemetry"
	"github.com/expd/expd/validate"
)

// Bounds of POST /v1/events (docs/ingest.md); the Python SDK sends at most
// as much.
const (
	eventsBodyLimit = 1 << 20
	maxBatchEvents  = 1000
)

// eventsEnvelope is the body of POST /v1/events. Events stay raw so that
// one malformed event is rejected alone instead of failing the batch.
type eventsEnvelope struct {
	Events *[]json.RawMessage `json:"events"`
}

// ingestAck is the IngestAck of the spec, plus counts of duplicates and
// the events refused by validation.
type ingestAck struct {
	Accepted      int                `json:"accepted"`
	Duplicates    int                `json:"duplicates"`
	ConfigVersion int64              `json:"config_version"`
	Rejected      []ingest.Rejection `json:"rejected"`
}

// POST /v1/events: answers 202 only once the batch's transaction has
// committed.
func (h *handlers) postEvents(c *gin.Context) {
	var env eventsEnvelope
	if !decodeJSON(c, &env) {
		return
	}
	switch {
	case env.Events == nil:
		invalid(c, validate.New("events", `is required: the body is {"events": [...]}`))
		return
	case len(*env.Events) == 0 || len(*env.Events) > maxBatchEvents:
		invalid(c, validate.New("events", "must hold 1 to %d events", maxBatchEvents))
		return
	}
	snap, ok := h.orgSnapshot(c)
	if !ok {
		return
	}
	raws := make([][]byte, len(*env.Events))
	for i, r := range *env.Events {
		raws[i] = r
	}
	prep, out, err := h.ingest.Live(c.Request.Context(), snap, raws)
	if err != nil {
		h.writeFailed(c, err)
		return
	}
	if prep.Rejected == nil {
		prep.Rejected = []ingest.Rejection{}
	}
	c.JSON(http.StatusAccepted, ingestAck{Accepted: out.Accepted, Duplicates: out.Duplicates, ConfigVersion: snap.ConfigVersion, Rejected: prep.Rejected})
}

// writeFailed answers a failed write: 429 past the monthly allowance, 503
// with Retry-After while the database is unreachable, 413 for a body
// over the limit, else 500. Never 202: nothing of the batch is known to
// be stored.
func (h *handlers) writeFailed(c *gin.Context, err error) {
	var allowance *ingest.AllowanceError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &allowance):
		telemetry.Refusals.WithLabelValues(telemetry.Allowance, string(allowance.Plan)).Inc()
		now := time.Now()
		wait := ingest.NextMonth(now).Sub(now)
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		problem(c, http.StatusTooManyRequests, CodeEventAllowanceExceeded, fmt.Sprintf(
			"the %s plan's monthly_event_allowance of %d events is used up for %s (%d stored, this request adds %d); nothing of this request was stored",
			allowance.Plan, allowance.Allowance, allowance.Month, allowance.Used, allowance.Adding))
	case errors.As(err, &tooBig):
		badInput(c, err)
	case ingest.Unavailable(err):
		databaseUnavailable(c, err, CodeStorageUnavailable,
			"events could not be stored now; nothing of this request is acknowledged, retry with the same event ids")
	default:
		internalError(c, err)
	}
}
