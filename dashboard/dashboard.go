package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/results"
	"github.com/expd/expd/usecases"
)

//go:embed templates assets
var files embed.FS

// Deps are the dashboard's collaborators. UseCases are the API's own
// (handed over by api.NewRouter), so a page and a route do one thing one
// way.
type Deps struct {
	DB *gorm.DB
	// Aggregator reads the traffic timelines from events; nil:
	// results.SQL over DB.
	Aggregator results.Aggregator
	// Events is the events store the call explorer reads; nil:
	// ingest.SQLEvents over DB.
	Events   ingest.EventStore
	Verifier *auth.Verifier
	Billing  *billing.Client
	Logger   *slog.Logger
	// UseCases save experiments (and what that sets off), start manual
	// runs and tell their state, and rotate keys.
	UseCases usecases.Service

	// DevToken, when set (expd dev only), signs in every visitor without a
	// session as the dev admin.
	DevToken string
	// TemporalUI is the Temporal UI's base URL ("" hides workflow links);
	// Namespace is the namespace expd's workflows run in.
	TemporalUI string
	Namespace  string
}

// Dashboard serves the pages.
type Dashboard struct {
	deps  Deps
	pages map[string]*template.Template
}

// New parses every page template once.
func New(deps Deps) (*Dashboard, error) {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Namespace == "" {
		deps.Namespace = "default"
	}
	if deps.Aggregator == nil {
		deps.Aggregator = results.SQL{DB: deps.DB}
	}
	if deps.Events == nil {
		deps.Events = ingest.SQLEvents{DB: deps.DB}
	}
	d := &Dashboard{deps: deps, pages: map[string]*template.Template{}}
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(files, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", n, err)
		}
		d.pages[base] = t
	}
	return d, nil
}

// Routes mounts the dashboard on r; every page route is listed here.
func (d *Dashboard) Routes(r gin.IRouter) {
	r.GET("/", func(c *gin.Context) { c.Redirect(http.StatusFound, "/experiments") })
	r.GET("/assets/*file", serveAsset)

	g := r.Group("", securityHeaders)
	g.GET("/sign-in", d.signInPage)
	g.POST("/sign-in", d.checkCSRF, d.signIn)
	g.POST("/sign-out", d.checkCSRF, d.signOut)

	s := g.Group("", d.requireSession)
	s.GET("/experiments", d.listPage)
	s.GET("/experiments/new", d.newPage)
	s.POST("/experiments/new", d.checkCSRF, d.createPost)
	s.GET("/experiments/:id", d.resultsPage)
	s.GET("/experiments/:id/edit", d.editPage)
	s.POST("/experiments/:id/edit", d.checkCSRF, d.editPost)
	s.GET("/experiments/:id/history", d.historyPage)
	s.GET("/experiments/:id/calls", d.callsPage)
	s.POST("/experiments/:id/calls/review", d.checkCSRF, d.reviewCall)
	s.POST("/experiments/:id/runs", d.checkCSRF, d.runNow)
	s.POST("/experiments/:id/lifecycle", d.requireAdmin, d.checkCSRF, d.lifecycle)
	s.GET("/experiments/:id/runs/:run_id/status", d.runStatus)
	s.GET("/evaluators", d.evaluatorsPage)
	s.GET("/evaluators/:id", d.evaluatorPage)
	s.GET("/layers", d.layersPage)
	s.GET("/privacy", d.requireAdmin, d.privacyPage)
	s.POST("/privacy", d.requireAdmin, d.checkCSRF, d.privacyPost)
	s.GET("/keys", d.requireAdmin, d.keysPage)
	s.POST("/keys", d.requireAdmin, d.checkCSRF, d.rotateKey)
	s.GET("/billing", d.billingPage)
	s.POST("/billing/checkout", d.requireAdmin, d.checkCSRF, d.checkout)
	s.POST("/billing/portal", d.requireAdmin, d.checkCSRF, d.portal)
}

// page is what every template receives; Data is the page's own.
type page struct {
	Title   string
	Nav     string
	Nonce   string
	CSRF    string
	Session *viewer
	Data    any
}

// viewer is the signed-in person as the layout shows them.
type viewer struct {
	OrgSlug string
	UserID  string
	Admin   bool
	Dev     bool
}

// render writes a page with status.
func (d *Dashboard) render(c *gin.Context, status int, name, title, nav string, data any) {
	t, ok := d.pages[name]
	if !ok {
		d.fail(c, fmt.Errorf("no page template %q", name))
		return
	}
	p := page{Title: title, Nav: nav, Nonce: nonce(c), CSRF: d.csrfToken(c), Data: data}
	if v, ok := c.Get(ctxViewer); ok {
		p.Session = v.(*viewer)
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", p); err != nil {
		d.fail(c, fmt.Errorf("render %s: %w", name, err))
		return
	}
	c.Data(status, "text/html; charset=utf-8", []byte(b.String()))
}

// fail answers an unexpected error with a plain error page; the cause goes
// to the log only.
func (d *Dashboard) fail(c *gin.Context, err error) {
	d.deps.Logger.ErrorContext(c.Request.Context(), "dashboard page failed", "path", c.Request.URL.Path, "error", err)
	if errors.Is(err, context.Canceled) {
		c.Abort()
		return
	}
	d.message(c, http.StatusInternalServerError, "Something went wrong", "The server could not build this page. Try again; if it keeps failing, the server log has the cause.")
}

// message renders a short page with a heading and a sentence.
func (d *Dashboard) message(c *gin.Context, status int, title, text string) {
	if _, ok := d.pages["message"]; !ok { // avoid recursion on a broken set
		c.String(status, title+": "+text)
		c.Abort()
		return
	}
	d.render(c, status, "message", title, "", struct{ Heading, Text string }{title, text})
	c.Abort()
}

func serveAsset(c *gin.Context) {
	name := strings.TrimPrefix(c.Param("file"), "/")
	b, err := files.ReadFile("assets/" + name)
	if err != nil || strings.Contains(name, "..") {
		c.Status(http.StatusNotFound)
		return
	}
	ct := "application/octet-stream"
	switch {
	case strings.HasSuffix(name, ".css"):
		ct = "text/css; charset=utf-8"
	case strings.HasSuffix(name, ".js"):
		ct = "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".svg"):
		ct = "image/svg+xml"
	}
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, ct, b)
}
