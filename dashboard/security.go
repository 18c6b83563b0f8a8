package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"
)

const (
	ctxNonce = "dashboard.nonce"
	ctxCSRF  = "dashboard.csrf"
	// csrfCookie holds the double-submit token; csrfField is the form field
	// that must repeat it.
	csrfCookie = "expd_csrf"
	csrfField  = "csrf_token"
)

// securityHeaders sets a per-response script nonce and the headers every
// page carries: a strict CSP (no inline script without the nonce, no
// inline style, nothing from other origins), no framing, no sniffing, and
// no caching of pages that show an org's data.
func securityHeaders(c *gin.Context) {
	n := randomToken(16)
	c.Set(ctxNonce, n)
	formAction := "'self'"
	if c.FullPath() == "/billing/checkout" || c.FullPath() == "/billing/portal" {
		// These forms end in a redirect to the payment provider's page.
		formAction = "'self' https:"
	}
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'nonce-"+n+"'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
	h.Set("Cache-Control", "no-store")
	c.Next()
}

func nonce(c *gin.Context) string { return c.GetString(ctxNonce) }

// csrfToken returns the browser's double-submit token, issuing the cookie
// on first sight. The cookie is SameSite=Strict and HttpOnly: a page on
// another site can neither send nor read it.
func (d *Dashboard) csrfToken(c *gin.Context) string {
	if t := c.GetString(ctxCSRF); t != "" {
		return t
	}
	t, err := c.Cookie(csrfCookie)
	if err != nil || len(t) < 20 {
		t = randomToken(32)
		setCookie(c, csrfCookie, t, 0)
	}
	c.Set(ctxCSRF, t)
	return t
}

// checkCSRF guards every form post: the form's token must equal the
// cookie's, and a browser-sent Origin must be this server's.
func (d *Dashboard) checkCSRF(c *gin.Context) {
	cookie, err := c.Cookie(csrfCookie)
	form := c.PostForm(csrfField)
	if err != nil || cookie == "" || subtle.ConstantTimeCompare([]byte(cookie), []byte(form)) != 1 || !sameOrigin(c.Request) {
		d.message(c, http.StatusForbidden, "Form expired",
			"This form could not be verified (it came from another site, or its security token is stale). Go back, reload the page and submit it again.")
		return
	}
	c.Next()
}

func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true // not sent by every browser on same-origin posts; the token decides
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

func setCookie(c *gin.Context, name, value string, maxAge int) {
	http.SetCookie(c.Writer, &http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: secure(c.Request), SameSite: sameSiteFor(name),
	})
}

// sameSiteFor: the session cookie must survive the identity provider's
// top-level redirects back (Lax, as Clerk sets it); the CSRF cookie never
// needs to leave the site (Strict).
func sameSiteFor(name string) http.SameSite {
	if name == sessionCookie {
		return http.SameSiteLaxMode
	}
	return http.SameSiteStrictMode
}

func secure(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return base64.RawURLEncoding.EncodeToString(b)
}
