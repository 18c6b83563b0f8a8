package api

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/validate"
)

// GET /v1/experiments[?status=draft|scheduled|running|stopped|shipped]
func (h *handlers) listExperiments(c *gin.Context) {
	status := c.Query("status")
	if status != "" && !experiments.IsStatus(status) {
		invalid(c, validate.New("status", "must be draft, scheduled, running, stopped or shipped"))
		return
	}
	list, err := h.experiments.List(c.Request.Context(), orgID(c), status)
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"experiments": list})
}

// POST /v1/experiments
func (h *handlers) createExperiment(c *gin.Context) {
	cfg, ok := decodeConfig(c, false)
	if !ok {
		return
	}
	exp, err := h.cases.CreateExperiment(c.Request.Context(), orgID(c), session(c).UserID, cfg)
	if err != nil {
		h.experimentError(c, err)
		return
	}
	c.Header("Location", "/v1/experiments/"+exp.ID)
	c.JSON(http.StatusCreated, exp)
}

// GET /v1/experiments/:id (id or unique name)
func (h *handlers) getExperiment(c *gin.Context) {
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	c.Header("ETag", versionTag(exp.Version))
	c.JSON(http.StatusOK, exp)
}

// GET /v1/experiments/:id/versions/:version (additive: stored versions)
func (h *handlers) getExperimentVersion(c *gin.Context) {
	// Versions are stored as 32-bit integers.
	n, err := strconv.ParseInt(c.Param("version"), 10, 32)
	if err != nil || n < 1 {
		invalid(c, validate.New("version", "must be an integer from 1 to %d", math.MaxInt32))
		return
	}
	exp, err := h.experiments.GetVersion(c.Request.Context(), orgID(c), c.Param("id"), int(n))
	if err != nil {
		h.experimentError(c, err)
		return
	}
	c.JSON(http.StatusOK, exp)
}

// PUT /v1/experiments/:id
func (h *handlers) updateExperiment(c *gin.Context) {
	cfg, ok := decodeConfig(c, true)
	if !ok {
		return
	}
	exp, err := h.cases.UpdateExperiment(c.Request.Context(), orgID(c), c.Param("id"), session(c).UserID, cfg)
	if err != nil {
		h.experimentError(c, err)
		return
	}
	c.Header("ETag", versionTag(exp.Version))
	c.JSON(http.StatusOK, exp)
}

// mergePatchType is the media type of PATCH bodies (RFC 7396).
const mergePatchType = "application/merge-patch+json"

// PATCH /v1/experiments/:id: a JSON merge patch of the current config,
// stored as the next version like PUT; If-Match: "<version>" makes it
// conditional (412 when another version is current).
func (h *handlers) patchExperiment(c *gin.Context) {
	if mt, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type")); mt != mergePatchType {
		writeProblem(c, Problem{Status: http.StatusUnsupportedMediaType, Code: CodeUnsupportedMediaType,
			Detail: "PATCH takes a JSON merge patch (RFC 7396): send Content-Type: " + mergePatchType})
		return
	}
	ifMatch, ok := ifMatchVersion(c)
	if !ok {
		return
	}
	patch, err := io.ReadAll(c.Request.Body)
	if err != nil {
		badInput(c, err)
		return
	}
	exp, err := h.cases.PatchExperiment(c.Request.Context(), orgID(c), c.Param("id"), session(c).UserID, ifMatch, patch)
	if errors.Is(err, experiments.ErrStale) {
		writeProblem(c, Problem{Status: http.StatusPreconditionFailed, Code: CodeVersionMismatch, Detail: err.Error() +
			"; read the experiment again and patch its current version"})
		return
	}
	if err != nil {
		h.experimentError(c, err)
		return
	}
	c.Header("ETag", versionTag(exp.Version))
	c.JSON(http.StatusOK, exp)
}

// versionTag is an experiment version as an entity tag.
func versionTag(version int) string { return `"` + strconv.Itoa(version) + `"` }

// ifMatchVersion reads If-Match: a version as GET's ETag gives it ("3"; a
// bare 3 is taken too), or * for any. 0 means unconditional.
func ifMatchVersion(c *gin.Context) (int, bool) {
	v := strings.TrimSpace(c.GetHeader("If-Match"))
	if v == "" || v == "*" {
		return 0, true
	}
	n, err := strconv.Atoi(strings.Trim(v, `"`))
	if err != nil || n < 1 || n > math.MaxInt32 {
		invalid(c, validate.New("If-Match", `must be the experiment version the patch was made against, as its ETag gives it ("3")`))
		return 0, false
	}
	return n, true
}

// decodeConfig reads an ExperimentConfig body, telling a missing or null
// required field from a zero value (experiments.DecodeConfig).
func decodeConfig(c *gin.Context, update bool) (experiments.Config, bool) {
	var raw json.RawMessage
	if !decodeJSON(c, &raw) {
		return experiments.Config{}, false
	}
	cfg, err := experiments.DecodeConfig(raw, update)
	if err != nil {
		badInput(c, err)
		return cfg, false
	}
	return cfg, true
}

// experimentParam loads the caller's org's experiment named by the :id
// path parameter (id or name); on failure it answers the request (404 for
// an unknown or another org's experiment) and returns false.
func (h *handlers) experimentParam(c *gin.Context) (experiments.Experiment, bool) {
	exp, err := h.experiments.Get(c.Request.Context(), orgID(c), c.Param("id"))
	if err != nil {
		h.experimentError(c, err)
		return exp, false
	}
	return exp, true
}

func (h *handlers) experimentError(c *gin.Context, err error) {
	switch {
	case errors.Is(err, experiments.ErrNotFound):
		problem(c, http.StatusNotFound, CodeExperimentNotFound, "no experiment with this id or name in your org")
	case errors.Is(err, experiments.ErrNameTaken):
		writeProblem(c, Problem{Status: http.StatusBadRequest, Code: CodeNameTaken, Detail: err.Error(),
			Errors: []validate.FieldError{{Field: "name", Reason: "already used by another experiment of this org"}}})
	case experiments.IsTransitionError(err):
		writeProblem(c, Problem{Status: http.StatusConflict, Code: CodeInvalidTransition, Detail: err.Error(), Errors: validate.Fields(err)})
	case validate.Fields(err) != nil:
		invalid(c, err)
	default:
		internalError(c, err)
	}
}
