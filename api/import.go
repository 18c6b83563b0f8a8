package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/ingest"
)

// importBodyLimit caps an NDJSON import (docs/ingest.md); bigger histories
// are split into several files.
const importBodyLimit = 256 << 20

// importAck is the 202 answer of an import.
type importAck struct {
	ingest.ImportResult
	ConfigVersion int64 `json:"config_version"`
}

// POST /v1/events/import (secret key): newline-delimited events, streamed
// into one transaction; timestamps as far back as the plan's retention.
func (h *handlers) importEvents(c *gin.Context) {
	snap, ok := h.orgSnapshot(c)
	if !ok {
		return
	}
	res, err := h.ingest.Import(c.Request.Context(), snap, c.Request.Body)
	if err != nil {
		h.writeFailed(c, err, "events", retryEvents)
		return
	}
	c.JSON(http.StatusAccepted, importAck{ImportResult: res, ConfigVersion: snap.ConfigVersion})
}
