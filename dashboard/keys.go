package dashboard

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/keys"
)

type keysData struct {
	Publishable string
	CreatedAt   time.Time
	Confirm     auth.Scope // a rotation waiting for confirmation
	NewKey      string     // the key just issued, shown this once
	NewScope    auth.Scope
	Error       string
}

// GET /keys (admins): the publishable key and the rotation forms.
func (d *Dashboard) keysPage(c *gin.Context) {
	var data keysData
	if !d.loadPublishable(c, &data) {
		return
	}
	d.render(c, http.StatusOK, "keys", "API keys", "keys", data)
}

func (d *Dashboard) loadPublishable(c *gin.Context, data *keysData) bool {
	plain, created, err := keys.Publishable(c.Request.Context(), d.deps.DB, orgID(c))
	if err != nil {
		d.fail(c, err)
		return false
	}
	data.Publishable, data.CreatedAt = plain, created
	return true
}

// POST /keys scope=…[&confirm=yes]: without confirm it asks; with it, it
// rotates through the API's own rotation (the KeyRotation workflow) and
// shows the new key once. The answer is never cached.
func (d *Dashboard) rotateKey(c *gin.Context) {
	var data keysData
	scope, err := auth.ParseScope(c.PostForm("scope"))
	if err != nil {
		d.message(c, http.StatusBadRequest, "Unknown key scope", "Choose the publishable or the secret key.")
		return
	}
	status := http.StatusOK
	if c.PostForm("confirm") != "yes" {
		data.Confirm = scope
	} else if k, err := d.deps.UseCases.RotateKey(c.Request.Context(), orgID(c), session(c).UserID, scope); err != nil {
		d.deps.Logger.ErrorContext(c.Request.Context(), "dashboard key rotation", "scope", scope, "error", err)
		data.Error = "The rotation did not complete (the workflow service may be unreachable or slow). The old key may still be live; rotate again to get a key you can see."
		status = http.StatusServiceUnavailable
	} else {
		data.NewKey, data.NewScope = k.Plain, scope
	}
	if !d.loadPublishable(c, &data) {
		return
	}
	d.render(c, status, "keys", "API keys", "keys", data)
}
