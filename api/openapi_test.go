package api_test

import (
	"bytes"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
)

// The document is valid OpenAPI 3.1 (kin-openapi's validator, JSON Schema
// 2020-12 for the schemas).
func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, _ := testenv.OpenAPI(t)
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
}

var ginParam = regexp.MustCompile(`[:*]([A-Za-z_]+)`)

// Every route of the gin router is an operation of the document, and
// every operation of the document is a route.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	doc, _ := testenv.OpenAPI(t)
	router := api.NewRouter(api.Deps{DB: testenv.DB(t), Verifier: testenv.Signer(t).Verifier()})
	routes := map[string]bool{}
	for _, r := range router.Routes() {
		routes[r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	var missing, extra []string
	for r := range routes {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for d := range documented {
		if !routes[d] {
			extra = append(extra, d)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes of api/router.go missing from api/openapi.json:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("operations of api/openapi.json that are no route:\n  %s", strings.Join(extra, "\n  "))
	}
	t.Logf("%d routes, %d documented operations", len(routes), len(documented))
}

// GET /v1/openapi.json serves the document without credentials,
// cacheable and revalidated by ETag.
func TestOpenAPIServed(t *testing.T) {
	env := testenv.New(t)
	r := env.Do(t, http.MethodGet, "/v1/openapi.json", nil)
	if r.Status != http.StatusOK || !bytes.Equal(r.Body, api.OpenAPIDocument()) {
		t.Fatalf("status %d, body of %d bytes; want 200 and the embedded document", r.Status, len(r.Body))
	}
	if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "public") {
		t.Errorf("Cache-Control %q, want public", cc)
	}
	etag := r.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	r = env.Do(t, http.MethodGet, "/v1/openapi.json", nil, "If-None-Match", etag)
	if r.Status != http.StatusNotModified {
		t.Errorf("If-None-Match: status %d, want 304", r.Status)
	}
}

// Every problem code of problem_codes.go is in the document: in the
// Problem schema's code enum and in the error responses of some operation
// or of the whole API (route_not_found, method_not_allowed,
// origin_not_allowed), so a new code cannot be left undocumented.
func TestOpenAPIListsEveryProblemCode(t *testing.T) {
	src, err := os.ReadFile("problem_codes.go")
	if err != nil {
		t.Fatal(err)
	}
	codes := regexp.MustCompile(`(?m)^\s*Code\w+\s*=\s*"([a-z_]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(codes) < 30 {
		t.Fatalf("read %d codes from problem_codes.go", len(codes))
	}
	doc, _ := testenv.OpenAPI(t)
	inSchema := map[string]bool{}
	for _, v := range doc.Components.Schemas["Problem"].Value.Properties["code"].Value.Enum {
		inSchema[v.(string)] = true
	}
	inResponses := map[string]bool{}
	for _, r := range doc.Components.Responses {
		mt := r.Value.Content.Get("application/problem+json")
		if mt == nil {
			continue // the dashboard pages' HTML error page
		}
		for _, s := range mt.Schema.Value.Properties["code"].Value.Enum {
			inResponses[s.(string)] = true
		}
	}
	for _, m := range codes {
		if !inSchema[m[1]] || !inResponses[m[1]] {
			t.Errorf("problem code %q: in the Problem schema's enum %v, in an error response %v", m[1], inSchema[m[1]], inResponses[m[1]])
		}
	}
	if len(inSchema) != len(codes) {
		t.Errorf("the Problem schema lists %d codes, problem_codes.go %d", len(inSchema), len(codes))
	}
}
