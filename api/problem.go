package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/database"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/workflowclient"
)

// Problem is an RFC 9457 problem-details body. Every non-2xx answer of the
// API is one, served as application/problem+json, except POST /v1/traces's,
// which are OTLP's google.rpc.Status (writeOTLPStatus).
type Problem struct {
	Type      string                `json:"type"`
	Title     string                `json:"title"`
	Status    int                   `json:"status"`
	Detail    string                `json:"detail,omitempty"`
	Instance  string                `json:"instance,omitempty"`
	RequestID string                `json:"request_id,omitempty"`
	Code      string                `json:"code,omitempty"`
	Errors    []validate.FieldError `json:"errors,omitempty"`
	// Extra members some problems carry (for example "hint": "collecting").
	Hint string `json:"hint,omitempty"`
}

const problemContentType = "application/problem+json"

// problemTypeBase prefixes the machine-readable problem type of each code.
const problemTypeBase = "https://expd.dev/problems/"

// problemRenderer writes a refusal in a route group's own format; a
// middleware sets one under ctxProblemRenderer (otlpAnswers: POST
// /v1/traces answers google.rpc.Status) and every refusal of the request,
// the key's and the rate limit's included, goes through it.
type problemRenderer func(c *gin.Context, p Problem)

const ctxProblemRenderer = "expd.problem_renderer"

// problem writes a problem and aborts the request. code is the stable
// machine-readable name clients switch on.
func problem(c *gin.Context, status int, code, detail string) {
	writeProblem(c, Problem{Status: status, Code: code, Detail: detail})
}

func writeProblem(c *gin.Context, p Problem) {
	if p.Title == "" {
		p.Title = http.StatusText(p.Status)
	}
	if p.Type == "" {
		p.Type = problemTypeBase + p.Code
	}
	if render, ok := c.Get(ctxProblemRenderer); ok {
		render.(problemRenderer)(c, p)
		return
	}
	p.Instance = c.Request.URL.Path
	p.RequestID = requestID(c)
	c.Header("Content-Type", problemContentType)
	c.AbortWithStatusJSON(p.Status, p)
	c.Writer.Header().Set("Content-Type", problemContentType)
}

// invalid answers 400 with the field errors of a validation failure.
func invalid(c *gin.Context, err error) {
	fields := validate.Fields(err)
	detail := fmt.Sprintf("%d field(s) failed validation", len(fields))
	if len(fields) == 1 {
		detail = fields[0].Field + ": " + fields[0].Reason
	}
	writeProblem(c, Problem{Status: http.StatusBadRequest, Code: CodeValidationFailed, Detail: detail, Errors: fields})
}

// databaseRetryAfter is the Retry-After (seconds) of a 503 while the
// database is unreachable.
const databaseRetryAfter = 2

// internalError logs err with the request's context and answers without
// leaking its text: 503 with Retry-After when the database is unreachable
// (the client should retry), 500 otherwise.
func internalError(c *gin.Context, err error) {
	if database.IsUnavailable(err) {
		databaseUnavailable(c, err, CodeDatabaseUnavailable, "the database is unreachable; retry after the Retry-After delay")
		return
	}
	slog.ErrorContext(c.Request.Context(), "request failed", "request_id", requestID(c), "path", c.FullPath(), "error", err)
	problem(c, http.StatusInternalServerError, CodeInternal, "the server failed to handle the request; quote the request_id when reporting it")
}

// badInput answers a decoding or validation failure with the right 4xx.
func badInput(c *gin.Context, err error) {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		problem(c, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit))
	case validate.Fields(err) != nil:
		invalid(c, err)
	default:
		problem(c, http.StatusBadRequest, CodeMalformedJSON, err.Error())
	}
}

func notFoundRoute(c *gin.Context) {
	problem(c, http.StatusNotFound, CodeRouteNotFound, "no route "+c.Request.Method+" "+c.Request.URL.Path)
}

func methodNotAllowed(c *gin.Context) {
	problem(c, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "method "+c.Request.Method+" is not allowed on "+c.Request.URL.Path)
}

// recovery turns a panic into a 500 problem instead of a dropped connection.
func recovery(c *gin.Context, recovered any) {
	internalError(c, fmt.Errorf("panic: %v", recovered))
}

// databaseUnavailable answers 503 with Retry-After for a failure that a
// retry may cure, logging it as a warning.
func databaseUnavailable(c *gin.Context, err error, code, detail string) {
	slog.WarnContext(c.Request.Context(), "database unavailable", "request_id", requestID(c), "path", c.FullPath(), "error", err)
	c.Header("Retry-After", strconv.Itoa(databaseRetryAfter))
	problem(c, http.StatusServiceUnavailable, code, detail)
}

// workflowsUnavailable answers 503 workflows_unavailable: this server is not
// connected to Temporal (workflowclient.ErrNotConnected), or Temporal did not
// accept a start that the client should retry.
func workflowsUnavailable(c *gin.Context, err error) {
	if !errors.Is(err, workflowclient.ErrNotConnected) {
		slog.ErrorContext(c.Request.Context(), "start workflow", "request_id", requestID(c), "path", c.FullPath(), "error", err)
	}
	problem(c, http.StatusServiceUnavailable, CodeWorkflowsUnavailable, "workflows cannot be started now (Temporal is unreachable or not connected); retry later")
}

// workflowStartFailed answers a failed start whose retry the client
// decides: 503 without Temporal, else 500.
func workflowStartFailed(c *gin.Context, err error) {
	if errors.Is(err, workflowclient.ErrNotConnected) {
		workflowsUnavailable(c, err)
		return
	}
	internalError(c, err)
}

// secretsNotConfigured refuses to store what (a judge's key, a signing
// secret) on a server without EXPD_SECRETS_KEY: it is never stored in
// clear.
func secretsNotConfigured(c *gin.Context, what string) {
	problem(c, http.StatusConflict, CodeSecretsNotConfigured,
		"this server has no EXPD_SECRETS_KEY to keep "+what+" encrypted; an operator must set one (docs/operations.md, \"Secrets at rest\")")
}
