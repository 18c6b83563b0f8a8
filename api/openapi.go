package api

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPIDocument is the OpenAPI 3.1 description of every route of
// NewRouter: the one source, edited by hand with the routes. The contract
// test (internal/testenv/contract.go) checks every request and response of
// the API tests against it, and TestOpenAPICoversEveryRoute checks that it and
// the route table name the same operations.
//
//go:embed openapi.json
var openAPIDocument []byte

var openAPIETag = func() string {
	sum := sha256.Sum256(openAPIDocument)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}()

// OpenAPIDocument returns a copy of the embedded OpenAPI document.
func OpenAPIDocument() []byte { return append([]byte(nil), openAPIDocument...) }

// serveOpenAPI answers GET /v1/openapi.json: public, cacheable for an hour,
// revalidated by ETag (the document changes only with a new build).
func serveOpenAPI(c *gin.Context) {
	c.Header("ETag", openAPIETag)
	c.Header("Cache-Control", "public, max-age=3600")
	if c.GetHeader("If-None-Match") == openAPIETag {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, "application/json", openAPIDocument)
}
