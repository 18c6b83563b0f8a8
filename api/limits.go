package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/validate"
)

// Body size limits; routes with bigger bodies (event ingest, import) set
// their own.
const defaultBodyLimit = 1 << 20 // 1 MiB

// limitBody caps the request body; reading past the cap fails with
// *http.MaxBytesError, which badInput answers with 413.
func limitBody(n int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > n {
			problem(c, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "request body exceeds the limit of this route")
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
