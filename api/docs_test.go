package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/expd/expd/internal/testenv"
)

// The reference page and every file it loads come from this server: no
// address outside the origin, a policy that forbids one, and the scripts
// it names are served.
func TestDocsPageServesItsOwnAssets(t *testing.T) {
	env := testenv.New(t)
	get := func(path string) testenv.Response { return env.Do(t, http.MethodGet, path, nil) }
	res := get("/docs")
	if res.Status != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs: %d %s", res.Status, res.Header.Get("Content-Type"))
	}
	page := string(res.Body)
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") || strings.Contains(page, "//cdn") {
		t.Fatalf("the page names an outside address:\n%s", page)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("policy %q", csp)
	}
	refs := regexp.MustCompile(`(?:src|href)="(/docs/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 3 {
		t.Fatalf("the page loads %d assets, want the stylesheet and two scripts", len(refs))
	}
	for _, ref := range refs {
		asset := get(ref[1])
		if asset.Status != http.StatusOK || len(asset.Body) == 0 {
			t.Errorf("%s: %d (%d bytes)", ref[1], asset.Status, len(asset.Body))
		}
	}
	if script := string(get("/docs/expd-docs.js").Body); !strings.Contains(script, "'/v1/openapi.json'") {
		t.Fatalf("the start script does not load the document:\n%s", script)
	}
	// Only the listed files: no source maps, no petstore initializer, no traversal.
	for _, name := range []string{"/docs/swagger-initializer.js", "/docs/swagger-ui.js.map", "/docs/..%2Fopenapi.json", "/docs/index.html"} {
		if got := get(name).Status; got != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", name, got)
		}
	}
}
