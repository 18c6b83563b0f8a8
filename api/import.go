package api

import (
	"net/http"
	"time"

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
	ctx := c.Request.Context()
	snap, err := h.deps.SDK.Configs.Get(ctx, orgID(c))
	if err != nil {
		internalError(c, err)
		return
	}
	tenant := tenantOf(snap)
	// All of the org's experiments, once: lines resolve against memory.
	refs, err := ingest.LookupExperiments(ctx, h.deps.DB, tenant.OrgID, nil)
	if err != nil {
		internalError(c, err)
		return
	}
	p := ingest.Preparer{
		OrgID:  tenant.OrgID,
		Window: ingest.Window{Now: time.Now(), MaxAge: tenant.Retention()},
		Source: ingest.SourceImport,
		Lookup: func([]string) (ingest.Refs, error) { return refs, nil },
	}
	res, err := h.deps.Ingest.Import(ctx, tenant, c.Request.Body, p)
	if err != nil {
		h.writeFailed(c, err)
		return
	}
	c.JSON(http.StatusAccepted, importAck{ImportResult: res, ConfigVersion: snap.ConfigVersion})
}
