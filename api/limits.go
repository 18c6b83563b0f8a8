package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/validate"
)

// Body size limits; routes with bigger bodies (event ingest, import) set
// their own.
const defaultBodyLimit = 1 << 20 // 1 MiB

// Header size limits. net/http reads up to ServerMaxHeaderBytes of request
// line and headers and answers anything larger itself, with a plain-text
// 431 no handler sees; MaxHeaderBytes, well below it, is the limit the
// API enforces, so an oversized header gets a 431 problem like every other
// refusal. 64 KiB holds any credential and cookie expd issues many times
// over.
const (
	MaxHeaderBytes       = 64 << 10
	ServerMaxHeaderBytes = 1 << 20
)

// limitHeaders answers 431 with a problem when the request line and
// headers exceed MaxHeaderBytes (counted as on the wire: "Name: value\r\n").
func limitHeaders(c *gin.Context) {
	r := c.Request
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + len(v) + 4
		}
	}
	if n > MaxHeaderBytes {
		c.Header("Connection", "close") // the client may not read a body it did not expect to send
		problem(c, http.StatusRequestHeaderFieldsTooLarge, CodeHeadersTooLarge, fmt.Sprintf("request line and headers of about %d bytes exceed the limit, %d bytes", n, MaxHeaderBytes))
		return
	}
	c.Next()
}

// limitBody caps the request body. A Content-Length over the cap is
// answered 413 before the body is read; reading past the cap of a body
// without one fails with *http.MaxBytesError, which badInput answers 413.
func limitBody(n int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > n {
			drainRefusedBody(c)
			problem(c, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, fmt.Sprintf("request body of %d bytes exceeds the limit of this route, %d bytes", c.Request.ContentLength, n))
			return
		}
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, n)
		c.Next()
	}
}

// decodeJSON reads a whole JSON object body into v. It answers the request
// itself (400/413) and returns false on failure.
func decodeJSON(c *gin.Context, v any) bool {
	dec := json.NewDecoder(c.Request.Body)
	if err := dec.Decode(v); err != nil {
		// DecodeError keeps a *http.MaxBytesError wrapped, so badInput
		// still answers an oversized body with 413.
		badInput(c, validate.DecodeError(err))
		return false
	}
	if dec.More() {
		problem(c, http.StatusBadRequest, CodeMalformedJSON, "body must hold exactly one JSON object")
		return false
	}
	return true
}

// decodeOptionalJSON is decodeJSON for routes whose body may be absent:
// an empty body leaves v as it is.
func decodeOptionalJSON(c *gin.Context, v any) bool {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		badInput(c, err)
		return false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return true
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	return decodeJSON(c, v)
}

// Draining a refused body: how much and for how long at most.
const (
	maxDrainBytes = 64 << 20
	drainTimeout  = 10 * time.Second
)

// drainRefusedBody reads and discards (a bounded amount of) a body that is
// being refused, so that the answer reaches clients that write the whole
// body before they read (Python's urllib and requests, curl without
// Expect): closing with unread data makes the kernel reset the connection,
// and such clients then see the reset instead of the 413. A client that
// sent "Expect: 100-continue" is waiting for this answer and has sent
// nothing, so there is nothing to drain; reading would invite the body.
// Bodies larger than maxDrainBytes, or slower than drainTimeout, still
// end in a closed connection (docs: "413 and clients").
func drainRefusedBody(c *gin.Context) {
	c.Header("Connection", "close")
	if strings.EqualFold(c.GetHeader("Expect"), "100-continue") || c.Request.Body == nil {
		return
	}
	_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now().Add(drainTimeout))
	_, _ = io.CopyN(io.Discard, c.Request.Body, maxDrainBytes)
}
