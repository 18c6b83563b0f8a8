package dashboard

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/orgs"
)

const (
	// sessionCookie is where Clerk keeps a same-site app's session JWT.
	sessionCookie = "__session"
	ctxViewer     = "dashboard.viewer"
	ctxSession    = "dashboard.session"
	ctxOrgID      = "dashboard.org_id"
)

// requireSession signs the request in with the identity JWT from
// "Authorization: Bearer", the __session cookie, or (expd dev only) the dev
// admin's token, verified by the API's own verifier. Without a valid one it
// shows how to sign in.
func (d *Dashboard) requireSession(c *gin.Context) {
	token, fromDev := sessionToken(c), false
	if token == "" && d.deps.DevToken != "" {
		token, fromDev = d.deps.DevToken, true
	}
	if token == "" {
		d.signedOut(c, "")
		return
	}
	sess, org, err := orgs.SignIn(c.Request.Context(), d.deps.DB, d.deps.Verifier, token)
	switch {
	case errors.Is(err, auth.ErrNoOrg):
		d.signedOut(c, "Your session has no active organization: choose one in your identity provider, then come back.")
		return
	case errors.Is(err, orgs.ErrBadToken):
		d.signedOut(c, "Your session token was not accepted (it may have expired).")
		return
	case errors.Is(err, orgs.ErrDeleted):
		d.signedOut(c, "Your organization has been deleted.")
		return
	case err != nil:
		d.fail(c, err)
		return
	}
	if fromDev {
		setCookie(c, sessionCookie, token, 0)
	}
	c.Set(ctxSession, sess)
	c.Set(ctxOrgID, org.ID)
	c.Set(ctxViewer, &viewer{OrgSlug: sess.OrgSlug, UserID: sess.UserID, Admin: sess.IsAdmin(), Dev: d.deps.DevToken != ""})
	c.Next()
}

func sessionToken(c *gin.Context) string {
	if t, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	t, _ := c.Cookie(sessionCookie)
	return t
}

func (d *Dashboard) requireAdmin(c *gin.Context) {
	if !session(c).IsAdmin() {
		d.message(c, http.StatusForbidden, "Admins only",
			"This page is for your organization's admins (role "+auth.AdminRole+"). Ask an admin of your organization to do this, or to make you an admin.")
		return
	}
	c.Next()
}

type signInData struct {
	Reason string
	Dev    bool
	Next   string
}

// signedOut answers 401 with the sign-in page, never a bare error.
func (d *Dashboard) signedOut(c *gin.Context, reason string) {
	d.render(c, http.StatusUnauthorized, "signin", "Sign in", "", signInData{Reason: reason, Dev: d.deps.DevToken != "", Next: safeNext(c.Request.URL.RequestURI())})
	c.Abort()
}

func (d *Dashboard) signInPage(c *gin.Context) { d.signedOut(c, "") }

// POST /sign-in takes a pasted session token (for deployments whose
// identity provider does not set the cookie on this domain), checks it
// and keeps it in the session cookie.
func (d *Dashboard) signIn(c *gin.Context) {
	token := strings.TrimSpace(c.PostForm("token"))
	if _, err := d.deps.Verifier.Verify(token); err != nil {
		d.render(c, http.StatusUnauthorized, "signin", "Sign in", "", signInData{Reason: "That token was not accepted: " + err.Error() + ".", Dev: d.deps.DevToken != ""})
		return
	}
	setCookie(c, sessionCookie, token, 0)
	c.Redirect(http.StatusSeeOther, safeNext(c.PostForm("next")))
}

func (d *Dashboard) signOut(c *gin.Context) {
	setCookie(c, sessionCookie, "", -1)
	c.Redirect(http.StatusSeeOther, "/sign-in")
}

// safeNext keeps redirects on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) || next == "/sign-in" {
		return "/experiments"
	}
	return next
}

func session(c *gin.Context) auth.Session {
	s, _ := c.Get(ctxSession)
	sess, _ := s.(auth.Session)
	return sess
}

func orgID(c *gin.Context) string { return c.GetString(ctxOrgID) }
