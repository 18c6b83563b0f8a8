package api

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"
	swaggerui "github.com/swaggo/files/v2"
)

// The API reference at /docs: Swagger UI (the swaggo/files/v2 module embeds
// its release files, so nothing is fetched from a CDN) over the embedded
// OpenAPI document. Our own page and start script replace the distribution's
// petstore ones; the policy below keeps the page to this origin.

// docsPage is /docs. Swagger UI needs inline styles for its own widgets.
const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>expd API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<main id="swagger-ui"><noscript>The reference needs JavaScript; the document itself is <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript></main>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/expd-docs.js"></script>
</body>
</html>
`

// docsScript starts Swagger UI on the embedded document, without the
// "try it out" calls' credentials persisted between visits.
const docsScript = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    validatorUrl: null,
    persistAuthorization: false
  });
});
`

const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docsAssets are the distribution's files /docs serves (no source maps, no
// petstore page or initializer).
var docsAssets = map[string]string{
	"swagger-ui.css":       "text/css; charset=utf-8",
	"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
}

func docsHeaders(c *gin.Context) {
	c.Header("Content-Security-Policy", docsCSP)
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Referrer-Policy", "no-referrer")
}

// serveDocs answers GET /docs.
func serveDocs(c *gin.Context) {
	docsHeaders(c)
	c.Data(http.StatusOK, "text/html; charset=utf-8", []byte(docsPage))
}

// serveDocsFile answers GET /docs/{file}: our start script or one of the
// distribution's files, cacheable for a day (they change only with a build).
func serveDocsFile(c *gin.Context) {
	name := path.Base(strings.TrimPrefix(c.Param("file"), "/"))
	docsHeaders(c)
	c.Header("Cache-Control", "public, max-age=86400")
	if name == "expd-docs.js" {
		c.Data(http.StatusOK, "text/javascript; charset=utf-8", []byte(docsScript))
		return
	}
	contentType, ok := docsAssets[name]
	if !ok {
		notFoundRoute(c)
		return
	}
	body, err := fs.ReadFile(swaggerui.FS, name)
	if err != nil {
		internalError(c, err)
		return
	}
	c.Data(http.StatusOK, contentType, body)
}
