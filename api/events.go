package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
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

// eventsDecoded is the same body decoded in one pass (decodeEvents).
type eventsDecoded struct {
	Events *[]*ingest.Event `json:"events"`
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
	evs, errs, ok := decodeEvents(c)
	if !ok {
		return
	}
	snap, ok := h.orgSnapshot(c)
	if !ok {
		return
	}
	prep, out, err := h.ingest.Live(c.Request.Context(), snap, evs, errs)
	if err != nil {
		h.writeFailed(c, err, "events", retryEvents)
		return
	}
	if prep.Rejected == nil {
		prep.Rejected = []ingest.Rejection{}
	}
	c.JSON(http.StatusAccepted, ingestAck{Accepted: out.Accepted, Duplicates: out.Duplicates, ConfigVersion: snap.ConfigVersion, Rejected: prep.Rejected})
}

// decodeEvents reads the events of a POST /v1/events body; errs[i] is
// event i's decoding error (errs is nil when there is none). The whole
// body is first decoded in one pass, which succeeds when every event is an
// object whose known fields have the right JSON types (nearly always):
// encoding/json then scans each byte twice, against four times when the
// events are first split out raw and then decoded one by one (the CPU
// profile's largest item, docs/ingest.md "Benchmark"). Otherwise the body
// is decoded that slower way, so that a bad event is rejected alone and a
// malformed body gets the same answer as before.
func decodeEvents(c *gin.Context) ([]ingest.Event, []error, bool) {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		badInput(c, validate.DecodeError(err))
		return nil, nil, false
	}
	var one eventsDecoded
	if json.Unmarshal(body, &one) == nil && one.Events != nil && !slices.Contains(*one.Events, nil) {
		if !eventCountOK(c, len(*one.Events)) {
			return nil, nil, false
		}
		evs := make([]ingest.Event, len(*one.Events))
		for i, e := range *one.Events {
			evs[i] = *e
		}
		return evs, nil, true
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	var env eventsEnvelope
	if !decodeJSON(c, &env) {
		return nil, nil, false
	}
	if env.Events == nil {
		invalid(c, validate.New("events", `is required: the body is {"events": [...]}`))
		return nil, nil, false
	}
	if !eventCountOK(c, len(*env.Events)) {
		return nil, nil, false
	}
	raws := make([][]byte, len(*env.Events))
	for i, r := range *env.Events {
		raws[i] = r
	}
	evs, errs := ingest.DecodeEach(raws)
	return evs, errs, true
}

// eventCountOK answers 400 unless a batch holds 1 to maxBatchEvents events.
func eventCountOK(c *gin.Context, n int) bool {
	if n == 0 || n > maxBatchEvents {
		invalid(c, validate.New("events", "must hold 1 to %d events", maxBatchEvents))
		return false
	}
	return true
}

// retryEvents is how a retried event write stays idempotent.
const retryEvents = "retry with the same event ids"

// writeFailed answers a failed write of records (events or scores): 429
// past the monthly allowance, 503 with Retry-After while the database is
// unreachable, 413 for a body over the limit, else 500. Never 202: nothing
// of the batch is known to be stored. retry says how a retry stays
// idempotent for those records.
func (h *handlers) writeFailed(c *gin.Context, err error, records, retry string) {
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
			records+" could not be stored now; nothing of this request is acknowledged, "+retry)
	default:
		internalError(c, err)
	}
}
