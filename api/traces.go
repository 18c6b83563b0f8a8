package api

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/otlp"
)

// tracesBodyLimit bounds a POST /v1/traces body, compressed and after
// gzip alike (docs/ingest.md "OTLP traces"): an exporter's batch of 512
// GenAI spans with their prompts fits.
const tracesBodyLimit = 4 << 20

// Codes of the route's own refusals. They are not problem codes: they
// only ever begin a google.rpc.Status message (docs/ingest.md "OTLP
// traces" lists them).
const (
	codeUnsupportedMediaType = "unsupported_media_type" // 415: Content-Type or Content-Encoding
	codeMalformedOTLP        = "malformed_otlp"         // 400: not an ExportTraceServiceRequest
)

// otlpAnswers makes every refusal of the route, the key's and the rate
// limit's included, an OTLP Status in the request's encoding, as OTLP/HTTP
// specifies, instead of problem+json. A body of an unknown media type gets
// its Status in JSON, readable by whoever sent it.
func otlpAnswers(c *gin.Context) {
	enc, ok := otlp.EncodingOf(c.GetHeader("Content-Type"))
	if !ok {
		enc = otlp.JSON
	}
	c.Set(ctxProblemRenderer, problemRenderer(func(c *gin.Context, p Problem) { writeOTLPStatus(c, enc, p) }))
	c.Next()
}

// POST /v1/traces: the GenAI spans of an OTLP/HTTP trace export become
// model_call events through the one ingest path, stored whole or refused
// whole; 200 with an ExportTraceServiceResponse only once they committed.
func (h *handlers) postTraces(c *gin.Context) {
	enc, ok := otlp.EncodingOf(c.GetHeader("Content-Type"))
	if !ok {
		problem(c, http.StatusUnsupportedMediaType, codeUnsupportedMediaType,
			"Content-Type must be application/x-protobuf or application/json (OTLP/HTTP)")
		return
	}
	body, ok := readOTLPBody(c)
	if !ok {
		return
	}
	req, err := otlp.Decode(body, enc)
	if err != nil {
		problem(c, http.StatusBadRequest, codeMalformedOTLP, err.Error()+"; nothing of this export was stored")
		return
	}
	calls := otlp.ModelCalls(req)
	snap, ok := h.orgSnapshot(c)
	if !ok {
		return
	}
	prep, _, err := h.ingest.Spans(c.Request.Context(), snap, calls.Events)
	if err != nil {
		h.writeFailed(c, err, "spans", "resend the same export (each span's event id is its trace id and span id)")
		return
	}
	if len(prep.Rejected) > 0 {
		problem(c, http.StatusBadRequest, CodeValidationFailed, spanRejections(prep.Rejected))
		return
	}
	resp := &coltracepb.ExportTraceServiceResponse{}
	if n := calls.Skipped(); n > 0 {
		resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: int64(n), ErrorMessage: calls.SkippedMessage()}
	}
	writeOTLP(c, http.StatusOK, enc, resp)
}

// readOTLPBody reads the body, gunzipped when Content-Encoding says gzip,
// within tracesBodyLimit both ways; on failure it has answered.
func readOTLPBody(c *gin.Context) ([]byte, bool) {
	var r io.Reader = c.Request.Body
	switch ce := strings.ToLower(c.GetHeader("Content-Encoding")); ce {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			problem(c, http.StatusBadRequest, codeMalformedOTLP, "Content-Encoding gzip: "+err.Error())
			return nil, false
		}
		r = io.LimitReader(zr, tracesBodyLimit+1)
	default:
		problem(c, http.StatusUnsupportedMediaType, codeUnsupportedMediaType, fmt.Sprintf("Content-Encoding %q: OTLP/HTTP bodies are gzip or not encoded", ce))
		return nil, false
	}
	body, err := io.ReadAll(r)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		badInput(c, err)
		return nil, false
	case err != nil:
		problem(c, http.StatusBadRequest, codeMalformedOTLP, "reading the body: "+err.Error())
		return nil, false
	case len(body) > tracesBodyLimit:
		badInput(c, &http.MaxBytesError{Limit: tracesBodyLimit})
		return nil, false
	}
	return body, true
}

// spanAttr names, in a rejection's reason, the span attribute or field an
// event field came from (otlp.ModelCalls).
var spanAttr = strings.NewReplacer(
	"event_id:", "traceId/spanId:", "experiment_id:", otlp.AttrExperiment+":",
	"variant:", otlp.AttrVariant+":", "user_id:", otlp.AttrUser+":", "timestamp:", "startTimeUnixNano:")

// spanRejections is the message of a refused export: each refused span by
// its event id (trace id + span id) and why.
func spanRejections(rejected []ingest.Rejection) string {
	const shown = 5
	parts := make([]string, 0, shown)
	for _, r := range rejected[:min(len(rejected), shown)] {
		parts = append(parts, fmt.Sprintf("span %s: %s", r.EventID, spanAttr.Replace(r.Reason)))
	}
	more := ""
	if len(rejected) > shown {
		more = fmt.Sprintf(" (and %d more)", len(rejected)-shown)
	}
	return fmt.Sprintf("%d span(s) refused, nothing of this export was stored: %s%s", len(rejected), strings.Join(parts, "; "), more)
}

// writeOTLPStatus answers a refusal of an OTLP request as OTLP/HTTP
// specifies: a google.rpc.Status in the request's encoding, its message
// the problem's code and detail.
func writeOTLPStatus(c *gin.Context, enc otlp.Encoding, p Problem) {
	msg := p.Code + ": " + p.Detail
	for _, f := range p.Errors {
		msg += "; " + f.Field + ": " + f.Reason
	}
	writeOTLP(c, p.Status, enc, &statuspb.Status{Code: int32(grpcCode(p.Status)), Message: msg})
	c.Abort()
}

func writeOTLP(c *gin.Context, status int, enc otlp.Encoding, m proto.Message) {
	b, err := enc.Marshal(m)
	if err != nil { // a message built here: a defect
		internalError(c, fmt.Errorf("encode OTLP answer: %w", err))
		return
	}
	c.Data(status, enc.ContentType(), b)
}

// grpcCode is the gRPC code of an HTTP refusal, for the Status body.
func grpcCode(status int) codes.Code {
	switch status {
	case http.StatusBadRequest, http.StatusUnsupportedMediaType:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusMethodNotAllowed:
		return codes.Unimplemented
	case http.StatusRequestEntityTooLarge, http.StatusTooManyRequests, http.StatusRequestHeaderFieldsTooLarge:
		return codes.ResourceExhausted
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusInternalServerError:
		return codes.Internal
	}
	return codes.Unknown
}
